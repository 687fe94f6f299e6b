"""autograd.functional.jacobian(strategy="forward-mode") nests its result as
torch's does (lists when outputs and inputs are both tuples)."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _structure(j):
    if isinstance(j, (list, tuple)):
        return (type(j).__name__, tuple(_structure(k) for k in j))
    return "tensor"


CASES = [
    (lambda L: (lambda a, b: (a * b, a + b)), 2, True),
    (lambda L: (lambda a: a * 2), 1, True),
    (lambda L: (lambda a: (a * 2,)), 1, False),
    (lambda L: (lambda a: a * 2), 1, False),
    (lambda L: (lambda a, b: a * b), 2, True),
    (lambda L: (lambda a, b: (a.sum(), a * b, b.exp())), 2, True),
]


@pytest.mark.parametrize("make,n_in,tuple_in", CASES)
def test_forward_mode_jacobian_structure_and_values(make, n_in, tuple_in):
    res = []
    for lib in (ptcore, torch):
        ins = tuple(lib.arange(1.0, 4.0) * (k + 1) for k in range(n_in))
        inputs = ins if tuple_in else ins[0]
        fwd = lib.autograd.functional.jacobian(make(lib), inputs, strategy="forward-mode",
                                               vectorize=True)
        rev = lib.autograd.functional.jacobian(make(lib), inputs)
        res.append((fwd, rev))
    (pf, pr), (tf, tr) = res
    assert _structure(pf) == _structure(tf)
    assert _structure(pr) == _structure(tr)

    def flat(j):
        return [x for k in j for x in flat(k)] if isinstance(j, (list, tuple)) else [j]
    for a, b in zip(flat(pf), flat(tf)):
        assert a.shape == b.shape
        assert ptcore.allclose(a, ptcore.from_numpy(b.numpy()), rtol=1e-6)
