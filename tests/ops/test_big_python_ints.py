"""Python ints in [2**63, 2**64) with integer tensors, as torch: the number
is read as an unsigned 64-bit Scalar and cast (wrapped) to the operand's
integer type (int8 + 2**63 adds 0; uint8 < 2**64 - 1 compares with 255;
int64 + 2**63 wraps to INT64_MIN); with a bool tensor, where the number sets
the result type, a RuntimeError; beyond 2**64 an OverflowError; full/fill_
refuse the value (RuntimeError).  Compared with torch when it is installed."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "bool"]
_CALLS = [
    lambda M, x: x + 2 ** 63,
    lambda M, x: x < 2 ** 64 - 1,
    lambda M, x: x * (2 ** 63 + 5),
    lambda M, x: x == 2 ** 63,
    lambda M, x: x & (2 ** 64 - 1),
    lambda M, x: (2 ** 63 + 7) - x,
    lambda M, x: x.clone().add_(2 ** 63),
    lambda M, x: x + 2 ** 64,
    lambda M, x: M.full((2,), 2 ** 63, dtype=x.dtype),
    lambda M, x: x.clone().fill_(2 ** 63 + 1),
]


def _outcome(M, dt, call):
    x = M.tensor([1, 2, 0], dtype=getattr(M, dt))
    try:
        r = call(M, x)
    except Exception as e:          # noqa: BLE001 - the type is compared
        return type(e).__name__
    return r.tolist(), str(r.dtype).split(".")[1]


@pytest.mark.parametrize("dt", _DTYPES)
@pytest.mark.parametrize("k", range(len(_CALLS)))
def test_against_torch(dt, k):
    assert _outcome(ptcore, dt, _CALLS[k]) == _outcome(torch, dt, _CALLS[k])
