"""Gradients, tangents and second derivatives of ops against torch (the oracle),
for the differences torch's OpInfo samples found (tools/opinfo_sweep.py --grad /
--fwad / --gradgrad, second round): which outputs are differentiable, which
gradients are None, and their values."""
import numpy as np
import pytest

import ptcore
import ptcore.autograd.forward_ad as pfw

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad


def _np(t):
    return None if t is None else t.detach().contiguous().numpy()


def _pair(arrays, requires_grad=True):
    ts = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    ps = [ptcore.tensor(a, requires_grad=requires_grad) for a in arrays]
    return ts, ps


def _cot(M, shape, seed=0):
    return M.tensor(np.random.default_rng(seed).standard_normal(tuple(shape)))


def _same(g, w):
    assert (g is None) == (w is None), (g, w)
    if w is not None:
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-9, atol=1e-12)


def _same_grads(f, *arrays, create_graph=False):
    """f(M, *tensors) under torch and ptcore: the same output, whether it is
    differentiable, the same gradients (None where torch's are), and with
    ``create_graph`` the same gradients of the gradients' sum."""
    ts, ps = _pair(arrays)
    wo, go = f(torch, *ts), f(ptcore, *ps)
    np.testing.assert_allclose(_np(go), _np(wo), rtol=1e-10, atol=1e-12)
    assert go.requires_grad == wo.requires_grad
    assert (go.grad_fn is None) == (wo.grad_fn is None)
    wg = torch.autograd.grad(wo, ts, _cot(torch, wo.shape), allow_unused=True,
                             create_graph=create_graph)
    gg = ptcore.autograd.grad(go, ps, _cot(ptcore, go.shape), allow_unused=True,
                              create_graph=create_graph)
    for g, w in zip(gg, wg):
        _same(g, w)
    if create_graph:
        wl = [w for w in wg if w is not None and w.requires_grad]
        gl = [g for g in gg if g is not None and g.requires_grad]
        assert len(gl) == len(wl)
        if wl:
            wgg = torch.autograd.grad(sum((w * w).sum() for w in wl), ts, allow_unused=True)
            ggg = ptcore.autograd.grad(sum((g * g).sum() for g in gl), ps, allow_unused=True)
            for g, w in zip(ggg, wgg):
                _same(g, w)


def _same_tangents(f, *arrays):
    """f(M, *duals) under torch's and ptcore's forward AD: the same tangent
    (a tensor of zeros where torch gives zeros, not None)."""
    rng = np.random.default_rng(3)
    tans = [rng.standard_normal(np.shape(a)) for a in arrays]
    with tfw.dual_level():
        wt = tfw.unpack_dual(f(torch, *[tfw.make_dual(torch.tensor(a), torch.tensor(t))
                                        for a, t in zip(arrays, tans)])).tangent
    with pfw.dual_level():
        gt = pfw.unpack_dual(f(ptcore, *[pfw.make_dual(ptcore.tensor(a), ptcore.tensor(t))
                                         for a, t in zip(arrays, tans)])).tangent
    _same(gt, wt)


_R = np.random.default_rng(1)


# --- linalg.householder_product with no reflector (tau of size 0) ---------------------

@pytest.mark.parametrize("ashape, tshape", [((0, 0), (0,)), ((3, 2), (0,)), ((2, 4, 3), (2, 0)),
                                            ((0, 3, 2), (0, 2))])
def test_householder_product_no_reflectors_records_a_node(ashape, tshape):
    # torch records LinalgHouseholderProductBackward0 whose gradients are None
    f = lambda M, A, tau: M.linalg.householder_product(A, tau)
    _same_grads(f, _R.standard_normal(ashape), np.zeros(tshape))
    _same_tangents(f, _R.standard_normal(ashape), np.zeros(tshape))


def test_householder_product_with_reflectors_unchanged():
    f = lambda M, A, tau: M.linalg.householder_product(A, tau)
    _same_grads(f, _R.standard_normal((4, 3)), _R.standard_normal(2))


# --- ormqr with an empty input (no reflector or an empty batch): None for input, tau ---

@pytest.mark.parametrize("shapes, left", [
    (((0, 5, 5), (0, 5), (0, 5, 5)), True),
    (((0, 5, 3), (0, 3), (0, 2, 5)), False),
    (((5, 0), (0,), (5, 3)), True),
    (((0, 0), (0,), (2, 0)), False),
    (((5, 5), (5,), (5, 0)), True),
    (((3, 5, 4), (3, 4), (3, 5, 2)), True),
])
def test_ormqr_grads_empty_input(shapes, left):
    f = lambda M, A, tau, C: M.ormqr(A, tau, C, left=left, transpose=True)
    _same_grads(f, *[_R.standard_normal(s) for s in shapes])


# --- aten.max_pool2d_with_indices_backward is differentiable --------------------------

def _max_pool_backward(M, x, g, ceil_mode=True):
    out, ind = M.nn.functional.max_pool2d(x, 3, 2, 0, 1, ceil_mode, return_indices=True)
    return M.ops.aten.max_pool2d_with_indices_backward.default(
        g, x, [3, 3], [2, 2], [0, 0], [1, 1], ceil_mode, ind)


@pytest.mark.parametrize("ceil_mode", [True, False])
def test_max_pool2d_with_indices_backward_grads(ceil_mode):
    x = _R.standard_normal((1, 2, 6, 7))
    g = _R.standard_normal((1, 2, 3 if ceil_mode else 2, 3))
    f = lambda M, x, g: _max_pool_backward(M, x, g, ceil_mode)
    _same_grads(f, x, g, create_graph=True)
    _same_tangents(f, x, g)


def test_max_pool2d_with_indices_backward_self_only():
    # only ``self`` needs a gradient: torch records a node, the gradient is zeros
    x = _R.standard_normal((2, 4, 4))
    tx, px = torch.tensor(x, requires_grad=True), ptcore.tensor(x, requires_grad=True)
    wo = _max_pool_backward(torch, tx, torch.ones(2, 2, 2, dtype=torch.float64))
    go = _max_pool_backward(ptcore, px, ptcore.ones(2, 2, 2, dtype=ptcore.float64))
    assert go.requires_grad and wo.requires_grad
    _same(ptcore.autograd.grad(go.sum(), px)[0], torch.autograd.grad(wo.sum(), tx)[0])


# --- float_power of float32 operands: derivatives in float64, as torch's --------------

@pytest.mark.parametrize("f", [
    lambda M, x, e: M.float_power(x, e),
    lambda M, x, e: M.float_power(x, 2.5),
    lambda M, x, e: M.float_power(1.7, x),
    lambda M, x, e: x.float_power(e * 0.5),
])
def test_float_power_float32_operands(f):
    # torch converts the operands to float64 before its pow: the float32 gradients
    # are float64 ones rounded once, the float64 tangent is exact
    x = _R.uniform(0.5, 4.0, (6, 5)).astype(np.float32)
    e = np.float32(2.7)
    cot = _R.standard_normal((6, 5))
    tx, te = torch.tensor(x, requires_grad=True), torch.tensor(e, requires_grad=True)
    px, pe = ptcore.tensor(x, requires_grad=True), ptcore.tensor(e, requires_grad=True)
    wo, go = f(torch, tx, te), f(ptcore, px, pe)
    wg = torch.autograd.grad(wo, (tx, te), torch.tensor(cot), allow_unused=True)
    gg = ptcore.autograd.grad(go, (px, pe), ptcore.tensor(cot), allow_unused=True)
    for g, w in zip(gg, wg):
        assert (g is None) == (w is None)
        if w is not None:
            assert g.dtype == ptcore.float32
            np.testing.assert_allclose(_np(g), _np(w), rtol=2e-7, atol=0)
    tans = [_R.standard_normal((6, 5)).astype(np.float32), np.float32(0.3)]
    with tfw.dual_level():
        wt = tfw.unpack_dual(f(torch, tfw.make_dual(torch.tensor(x), torch.tensor(tans[0])),
                               tfw.make_dual(torch.tensor(e), torch.tensor(tans[1])))).tangent
    with pfw.dual_level():
        gt = pfw.unpack_dual(f(ptcore, pfw.make_dual(ptcore.tensor(x), ptcore.tensor(tans[0])),
                               pfw.make_dual(ptcore.tensor(e), ptcore.tensor(tans[1])))).tangent
    assert gt.dtype == ptcore.float64
    np.testing.assert_allclose(_np(gt), _np(wt), rtol=1e-13, atol=0)


# --- pow with a number operand: the number is no input of the node ---------------------

@pytest.mark.parametrize("f", [lambda M, x: x ** 2, lambda M, x: M.pow(2.0, x),
                               lambda M, x: M.pow(x, 0.5), lambda M, x: x ** x])
def test_pow_node_inputs_as_torch(f):
    x = _R.uniform(0.5, 2.0, 4)
    tx, px = torch.tensor(x, requires_grad=True), ptcore.tensor(x, requires_grad=True)
    wo, go = f(torch, tx), f(ptcore, px)
    assert go.grad_fn.name() == wo.grad_fn.name()
    assert [n is None for n, _ in go.grad_fn.next_functions] == \
        [n is None for n, _ in wo.grad_fn.next_functions]
    wg, = torch.autograd.grad(wo.sum(), tx, create_graph=True)
    gg, = ptcore.autograd.grad(go.sum(), px, create_graph=True)
    _same(gg, wg)
    _same(ptcore.autograd.grad(gg.sum(), px)[0], torch.autograd.grad(wg.sum(), tx)[0])


_NUMBER_ARG_CASES = {
    "clamp(0, 1)": lambda L, x, y, m: x.clamp(0, 1),
    "clamp(t, t)": lambda L, x, y, m: x.clamp(y - 2, y),
    "clamp_min(0.7)": lambda L, x, y, m: x.clamp_min(0.7),
    "clamp_min(t)": lambda L, x, y, m: L.clamp_min(x, y - 1),
    "clamp_max(t)": lambda L, x, y, m: L.clamp_max(x, y - 1),
    "2 - x": lambda L, x, y, m: 2 - x,
    "lerp(y, 0.5)": lambda L, x, y, m: L.lerp(x, y, 0.5),
    "lerp(y, w)": lambda L, x, y, m: L.lerp(x, y, y / 4),
    "fmod(2)": lambda L, x, y, m: L.fmod(x, 2),
    "remainder(2)": lambda L, x, y, m: L.remainder(x, 2),
    "masked_fill(m, 0)": lambda L, x, y, m: x.masked_fill(m, 0.0),
    "masked_fill(m, t)": lambda L, x, y, m: x.masked_fill(m, y.sum()),
    "xlogy(x, 2)": lambda L, x, y, m: L.xlogy(x, 2.0),
    "xlogy(2, x)": lambda L, x, y, m: L.xlogy(2.0, x),
    "xlogy(x, y)": lambda L, x, y, m: L.xlogy(x, y),
    "copysign(x, 2)": lambda L, x, y, m: L.copysign(x, -2.0),
    "copysign(x, y)": lambda L, x, y, m: L.copysign(x, y),
}


@pytest.mark.parametrize("case", sorted(_NUMBER_ARG_CASES))
def test_nodes_list_only_the_overloads_differentiable_inputs(case):
    """torch's node of an overload with a number (or mask) argument lists only
    the differentiable inputs in next_functions, under the overload's name."""
    f = _NUMBER_ARG_CASES[case]
    res = {}
    for L in (torch, ptcore):
        x = L.tensor([0.5, 1.5, 2.0, -0.25], dtype=L.float64, requires_grad=True)
        y = L.tensor([1.0, 2.0, 3.0, 0.5], dtype=L.float64, requires_grad=True)
        m = L.tensor([True, False, True, False])
        r = f(L, x, y, m)
        gx, gy = L.autograd.grad(r.sum(), (x, y), allow_unused=True)
        res[L.__name__] = (r.grad_fn.name(),
                           [None if n is None else n.name() for n, _ in r.grad_fn.next_functions],
                           None if gx is None else gx.tolist(), None if gy is None else gy.tolist())
    assert res["ptcore"] == res["torch"]
