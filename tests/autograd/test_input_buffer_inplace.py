"""The engine sums the gradients reaching one node in place when it alone
holds the first one; a gradient anyone else still holds (a Function's own
tensor, a hook's list, a gradient handed to two inputs) is never written."""
import numpy as np
import pytest

import ptcore


class _Keep(ptcore.autograd.Function):
    """Identity whose backward returns a tensor it keeps."""
    kept = []

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        r = g * 1.0
        _Keep.kept.append(r)
        return r


@pytest.mark.parametrize("first", [True, False])
def test_kept_gradient_not_modified(first):
    # (either order: the kept tensor is the first gradient to reach a's node
    # in one of them)
    _Keep.kept.clear()
    x = ptcore.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2
    if first:                   # the later node runs first: Keep's gradient arrives first
        b7 = a * 7
        k = _Keep.apply(a)
    else:
        k = _Keep.apply(a)
        b7 = a * 7
    (k * 5 + b7).sum().backward()           # two gradients reach a's node
    assert _Keep.kept[0].tolist() == [5.0, 5.0, 5.0]
    assert x.grad.tolist() == [24.0, 24.0, 24.0]


def test_hook_gradient_and_shared_gradient_not_modified():
    held = []
    x = ptcore.tensor([1.0, -2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: held.append(g))
    z = (y + y) + y * y                        # AddBackward hands one tensor to both inputs
    z.backward(ptcore.tensor([1.0, 1.0]))
    np.testing.assert_array_equal(held[0].numpy(), [2.0 + 6.0, 2.0 - 12.0])
    np.testing.assert_array_equal(x.grad.numpy(), 3 * np.array([8.0, -10.0]))


def test_many_branches_sum():
    x = ptcore.arange(4.0, requires_grad=True)
    a = x * 1
    sum(a * float(k) for k in range(1, 6)).sum().backward()
    assert x.grad.tolist() == [15.0] * 4


class _FromNumpy(ptcore.autograd.Function):
    """Identity whose backward returns a tensor over NumPy memory it keeps."""
    arrays = []

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        arr = g.numpy().copy()
        _FromNumpy.arrays.append(arr)
        return ptcore.from_numpy(arr)


def test_borrowed_memory_not_written():
    # a gradient over memory ptcore does not own (a NumPy array) is summed
    # out of place: the array keeps its values
    _FromNumpy.arrays.clear()
    x = ptcore.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    (_FromNumpy.apply(a) * 2 + a * 3).sum().backward()
    np.testing.assert_array_equal(_FromNumpy.arrays[0], [2.0, 2.0])
    assert x.grad.tolist() == [5.0, 5.0]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.bfloat16,
                                   ptcore.complex64])
def test_leaf_used_many_times(dtype):
    # 50 gradients summed into one buffer (in place where the loop covers the
    # dtype, through add_ where not); values as a sum in float64
    x = ptcore.ones(3, dtype=dtype, requires_grad=True)
    w = ptcore.full((3,), 0.5, dtype=dtype, requires_grad=True)
    y = x
    for _ in range(25):
        y = y * w + x
    y.real.sum().backward() if dtype.is_complex else y.sum().backward()
    # y_k = w y_{k-1} + 1 with y_0 = 1: dy/dx = sum_{k<=25} w^k (+ w^25)
    ref = sum(0.5 ** k for k in range(25)) + 0.5 ** 25
    tol = 2e-2 if dtype is ptcore.bfloat16 else 1e-5
    np.testing.assert_allclose(x.grad.real.float().numpy() if dtype.is_complex
                               else x.grad.float().numpy(), [ref] * 3, rtol=tol)
