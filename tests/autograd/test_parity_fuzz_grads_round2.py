"""Gradients (first and second order) of indexing, linalg and nn.functional
ops against torch (the oracle), round 2: differences found by differential
fuzzing."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from test_parity_fuzz_grads import _same  # noqa: E402  (round 1's comparison)


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
    _same(lambda M, a: M.det(a), batch)                 # (no graph: 0 where det == 0)


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
