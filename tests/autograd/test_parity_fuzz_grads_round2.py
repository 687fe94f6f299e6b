"""Gradients (first and second order) of indexing, linalg and nn.functional
ops against torch (the oracle), round 2: differences found by differential
fuzzing."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from test_parity_fuzz_grads import _grads, _same  # noqa: E402  (round 1's comparison)


def test_index_fill_value_gradient_counts_a_repeated_index_once():
    x = np.arange(12.).reshape(3, 4)
    _same(lambda M, a, v: M.index_fill(a, 1, M.tensor([3, 0, 3]), v), x, 2.)
    _same(lambda M, a, v: a.index_fill(0, M.tensor([2, 2]), v), x, 2.)


_SINGULAR = np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]])


def test_det_gradient_with_create_graph_at_a_singular_matrix_is_the_cofactor_matrix():
    # torch's recorded backward (create_graph) goes through the SVD where
    # |det| < 100 eps: the cofactor matrix, and its derivative
    _same(lambda M, a: M.linalg.det(a), _SINGULAR, double=True)
    rs = np.random.RandomState(3)
    batch = np.stack([_SINGULAR, rs.randn(3, 3), _SINGULAR.T])
    _same(lambda M, a: M.linalg.det(a), batch, double=True)
    # without a graph: conj(det) * grad * A^-H through the LU, 0 where det == 0.  ptcore's
    # LU (its own, the same on every CPU: tests/ops/test_lu_kernel_independence.py) leaves
    # a rounding-sized pivot in _SINGULAR, as torch's MKL does where it takes its FMA path,
    # so the gradient is the cofactor matrix (torch's recorded gradient), and an exact zero
    # in _SINGULAR.T, so 0.  MKL's non-FMA path (on AMD CPUs) has exact zeros in both, so
    # torch's unrecorded gradient is compared only where its LU is ptcore's
    got = _grads(ptcore, lambda M, a: M.det(a), [batch])[0]
    recorded = _grads(torch, lambda M, a: M.linalg.det(a), [batch], double=True)[0]
    det = ptcore.linalg.det(ptcore.from_numpy(batch)).numpy()
    assert det[0] != 0 and det[2] == 0
    want = np.where((det == 0)[:, None, None], 0.0, recorded)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)
    t_lu = torch.linalg.lu_factor_ex(torch.from_numpy(batch).mT)[0].numpy()
    p_lu = ptcore.linalg.lu_factor_ex(ptcore.from_numpy(batch).mT)[0].numpy()
    if t_lu.tobytes() == p_lu.tobytes():
        _same(lambda M, a: M.det(a), batch)


@pytest.mark.parametrize("p", [1.5, 3, 3.5])
def test_vector_norm_second_derivative_at_a_zero_vector_is_zero(p):
    v = np.array([[0., 1., -2., 2.], [0., 0., 0., 0.]])
    _same(lambda M, a: M.linalg.vector_norm(a, p, dim=1), v, double=True)
    _same(lambda M, a: M.linalg.vector_norm(a, p), v * 0, double=True)
    _same(lambda M, a: M.norm(a, p, dim=1), v, double=True)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("delta", [0.5, 2.0])
def test_huber_second_derivative_is_zero_on_the_delta_edge(reduction, delta):
    x = np.array([1., 2, 3, 0.2, -0.5, 3])
    t = np.array([1., 0, 3, 0., 0., 0])
    _same(lambda M, a, b: M.nn.functional.huber_loss(a, b, reduction=reduction, delta=delta),
          x, t, double=True)


def test_std_mean_node_is_named_std_mean_backward():
    for M in (torch, ptcore):
        x = M.ones(3, 4, dtype=M.float64, requires_grad=True)
        for y in M.std_mean(x, 1):
            assert y.grad_fn.name() == "StdMeanBackward0"
            assert type(y.grad_fn).__name__ == "StdMeanBackward0"
        assert M.var_mean(x)[0].grad_fn.name() == "VarMeanBackward0"
    _same(lambda M, a: sum(M.std_mean(a, 1)), np.arange(12.).reshape(3, 4), double=True)
