"""mm / matmul / addmm of plain float32 CPU matrices take one Cython call
(``_blas.mm_fast`` / ``addmm_fast``) instead of the Python front-end: the
same bits as the full path for every layout it accepts, the full path's
errors for everything it declines, and autograd unchanged."""
import numpy as np
import pytest

import ptcore


def _mat(rng, rows, cols, layout):
    if layout == "c":
        return ptcore.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    if layout == "t":
        return ptcore.from_numpy(rng.standard_normal((cols, rows)).astype(np.float32)).t()
    # rows of a wider matrix (leading dimension > cols)
    return ptcore.from_numpy(rng.standard_normal((rows, cols + 3)).astype(np.float32))[:, 1:cols + 1]


@pytest.mark.parametrize("la", ["c", "t", "s"])
@pytest.mark.parametrize("lb", ["c", "t", "s"])
@pytest.mark.parametrize("m,k,n", [(2, 2, 2), (5, 7, 3), (48, 32, 64), (130, 70, 90)])
def test_same_bits_as_the_full_path(la, lb, m, k, n):
    rng = np.random.default_rng(m + k + n)
    a, b = _mat(rng, m, k, la), _mat(rng, k, n, lb)
    v = ptcore.from_numpy(rng.standard_normal(n).astype(np.float32))
    full = ptcore.empty(m, n)
    ptcore.mm(a, b, out=full)                        # out= takes the full path
    assert np.array_equal(ptcore.mm(a, b).numpy(), full.numpy())
    assert np.array_equal((a @ b).numpy(), full.numpy())
    slow = ptcore.addmm(v, a, b, beta=1.0, alpha=1.0)  # float beta/alpha: full path
    assert np.array_equal(ptcore.addmm(v, a, b).numpy(), slow.numpy())
    want = a.numpy().astype(np.float64) @ b.numpy().astype(np.float64)
    np.testing.assert_allclose(full.numpy(), want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(slow.numpy(), want + v.numpy(), rtol=1e-5, atol=1e-4)


def test_declined_cases_keep_the_full_path():
    a = ptcore.randn(4, 3)
    b = ptcore.randn(3, 5)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ptcore.mm(a, ptcore.randn(4, 5))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ ptcore.randn(4, 5)
    with pytest.raises(TypeError):
        ptcore.mm(a, np.ones((3, 5), dtype=np.float32))
    with pytest.raises(RuntimeError):
        ptcore.addmm(ptcore.randn(4), a, b)            # bias of the wrong length
    with pytest.raises(RuntimeError, match="same dtype"):
        ptcore.mm(a, b.double())
    # other dtypes, vectors, size-1 dims, broadcast and 2-d inputs
    np.testing.assert_allclose(ptcore.mm(a.double(), b.double()).numpy(),
                               a.numpy().astype(np.float64) @ b.numpy(), rtol=1e-6)
    assert ptcore.mm(ptcore.ones(1, 3), b).shape == (1, 5)
    assert (a @ ptcore.ones(3)).shape == (4,)
    c = ptcore.randn(4, 5)
    np.testing.assert_allclose(ptcore.addmm(c, a, b).numpy(), c.numpy() + a.numpy() @ b.numpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ptcore.addmm(ptcore.ones(1, 5), a, b).numpy(),
                               1 + a.numpy() @ b.numpy(), rtol=1e-5, atol=1e-5)
    got = ptcore.addmm(ptcore.ones(5), a, b, beta=0)
    np.testing.assert_allclose(got.numpy(), a.numpy() @ b.numpy(), rtol=1e-5, atol=1e-5)
    ints = ptcore.arange(6).view(2, 3)
    assert (ints @ ints.t()).dtype == ptcore.int64


def test_autograd_unchanged():
    a = ptcore.randn(6, 4, requires_grad=True)
    b = ptcore.randn(4, 5, requires_grad=True)
    v = ptcore.randn(5, requires_grad=True)
    y = ptcore.addmm(v, a, b)
    assert y.grad_fn.name() == "AddmmBackward0"
    assert (a @ b).grad_fn.name() == "MmBackward0"
    y.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), np.full(5, 6.0))
    np.testing.assert_allclose(a.grad.numpy(), np.tile(b.detach().numpy().sum(1), (6, 1)),
                               rtol=1e-5)
    with ptcore.no_grad():
        assert ptcore.mm(a, b).grad_fn is None
