"""Integer convolutions as torch's CPU ones: every integer dtype forward
(wrapping arithmetic), int64 only for dilated and transposed convolutions,
bool refused."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


def _cases(T, dt):
    F = T.nn.functional
    d = getattr(T, dt)
    g = np.random.default_rng(0)
    lo = 0 if dt == "uint8" else -100

    def r(*shape):
        return T.tensor(g.integers(lo, 100, shape), dtype=d)
    cases = [
        F.conv1d(r(2, 4, 9), r(6, 2, 3), r(6), stride=2, padding=2, groups=2),
        F.conv2d(r(1, 3, 7, 6), r(4, 3, 2, 3), padding="same"),
        F.conv2d(r(3, 7, 6), r(4, 3, 3, 3), stride=(2, 1)),
        F.conv3d(r(1, 2, 4, 4, 4), r(2, 2, 2, 2, 2), padding=1),
    ]
    if dt == "int64":
        cases += [
            F.conv1d(r(1, 2, 9), r(3, 2, 2), dilation=2),
            F.conv_transpose1d(r(2, 4, 5), r(4, 3, 3), r(6), stride=2, padding=1,
                               output_padding=1, groups=2, dilation=2),
            F.conv_transpose2d(r(1, 2, 3, 4), r(2, 3, 2, 3), stride=(2, 3), padding=(1, 0)),
            F.conv_transpose3d(r(1, 2, 2, 3, 2), r(2, 1, 2, 2, 2)),
        ]
    return cases


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dt", DTYPES)
def test_integer_convolutions_as_torch(dt):
    got, expect = _cases(ptcore, dt), _cases(torch, dt)
    for p, t in zip(got, expect):
        assert str(p.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.parametrize("name,fn", [
    ("bool", lambda T: T.nn.functional.conv2d(T.ones(1, 1, 3, 3, dtype=T.bool),
                                              T.ones(1, 1, 2, 2, dtype=T.bool))),
    ("dilated int32", lambda T: T.nn.functional.conv2d(
        T.ones(1, 1, 5, 5, dtype=T.int32), T.ones(1, 1, 2, 2, dtype=T.int32), dilation=2)),
    ("transposed uint8", lambda T: T.nn.functional.conv_transpose2d(
        T.ones(1, 1, 3, 3, dtype=T.uint8), T.ones(1, 1, 2, 2, dtype=T.uint8))),
])
def test_unsupported_integer_convolutions_raise_as_torch(name, fn):
    with pytest.raises(NotImplementedError):
        fn(torch)
    with pytest.raises(NotImplementedError, match="not implemented for"):
        fn(ptcore)
