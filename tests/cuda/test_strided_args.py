"""ptcore.cuda.ops.strided_args.strided_arg (the C form of the elementwise
launch's stride handling) against its Python reference: ``_bcast_strides``
+ ``_kernels.collapse_dims`` + ``_kernels.pack_strided``.  It reads shapes
and strides only, so CPU tensors exercise it."""
import numpy as np
import pytest

import ptcore
from ptcore.cuda.kernels import library as K
from ptcore.cuda.ops.strided_args import strided_arg


def _reference(out, inputs):
    shape = list(out.shape)
    strides = [list(out.stride())]
    for x in inputs:
        off = len(shape) - x.dim()
        s = [0] * len(shape)
        for d in range(x.dim()):
            if x.shape[d] != 1:
                assert off + d >= 0
                s[off + d] = x.stride()[d]
        strides.append(s)
    sizes, cst = K.collapse_dims(shape or [1], strides if shape else [[0] for _ in strides])
    if len(sizes) == 1 and all(s[0] == 1 for s in cst):
        return None
    return K.pack_strided(sizes, cst)


def _view(rng, shape):
    """A tensor of ``shape``: contiguous, transposed, sliced or expanded."""
    kind = rng.integers(4)
    if kind == 0 or len(shape) < 2:
        return ptcore.empty(shape)
    if kind == 1:
        t = ptcore.empty(shape[::-1])
        return t.permute(*range(len(shape) - 1, -1, -1))
    if kind == 2:
        big = [s * 2 for s in shape]
        t = ptcore.empty(big)
        return t[tuple(slice(None, None, 2) for _ in shape)]
    base = list(shape)
    d = int(rng.integers(len(shape)))
    base[d] = 1
    return ptcore.empty(base).expand(*shape)


@pytest.mark.parametrize("seed", range(60))
def test_matches_the_python_reference(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(0, 6))
    shape = [int(s) for s in rng.integers(1, 4, nd)]
    out = _view(rng, shape) if rng.integers(3) == 0 else ptcore.empty(shape)
    inputs = []
    for _ in range(int(rng.integers(0, 4))):
        # an input of a trailing part of out's shape, some dims broadcast (1)
        k = int(rng.integers(0, nd + 1))
        s = [1 if rng.integers(3) == 0 else x for x in shape[nd - k:]]
        inputs.append(_view(rng, s))
    assert strided_arg(out, inputs) == _reference(out, inputs)


def test_dense_operands_take_the_contiguous_variant():
    a = ptcore.empty(3, 4)
    assert strided_arg(a, [ptcore.empty(3, 4), ptcore.empty(3, 4)]) is None
    assert strided_arg(a, []) is None
    # a broadcast row: strided, with a zero stride for the bias
    b = strided_arg(a, [ptcore.empty(4)])
    assert b == K.pack_strided([3, 4], [[4, 1], [0, 1]])


def test_zero_dim_and_one_element_outputs():
    z = ptcore.empty(())
    assert strided_arg(z, [ptcore.empty(())]) == K.pack_strided([1], [[0], [0]])
    assert strided_arg(ptcore.empty(1, 1), [ptcore.empty(1)]) == K.pack_strided([1], [[0], [0]])


def test_too_many_dims_raise_like_collapse_dims():
    shape = [2] * 9
    out = ptcore.empty(shape)
    x = ptcore.empty([4] * 9)[tuple(slice(None, None, 2) for _ in range(9))]
    with pytest.raises(ValueError, match="dims remain"):
        K.collapse_dims(shape, [list(out.stride()), list(x.stride())])
    with pytest.raises(ValueError, match="dims remain"):
        strided_arg(out, [x])


def test_bad_arguments():
    with pytest.raises(TypeError):
        strided_arg(3, [])
    with pytest.raises(ValueError, match="inputs"):
        strided_arg(ptcore.empty(2), [ptcore.empty(2)] * 8)
    with pytest.raises(ValueError, match="does not broadcast"):
        strided_arg(ptcore.empty(2), [ptcore.empty(3, 2)])


def test_extra_leading_dims_of_size_one():
    # a [1] source into a 0-d output (cast_copy of a reduction's result)
    assert strided_arg(ptcore.empty(()), [ptcore.empty(1)]) == _reference(ptcore.empty(()), [ptcore.empty(1)])
    out = ptcore.empty(2, 3)
    assert strided_arg(out, [ptcore.empty(1, 1, 2, 3)]) is None
