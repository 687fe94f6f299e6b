"""torch's memory-overlap checks on the elementwise ops written with other ops
(igamma, igammac, heaviside, ldexp, logaddexp, logaddexp2) and bernoulli_ with a
tensor of probabilities: the tensor they write (``out=`` or ``self`` in place)
may be an input's own memory but not part of it, and no two of its elements may
share memory.  Each case runs on torch and ptcore: the same exception type, or
the same values when both accept it."""

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

BINARY = ["igamma", "igammac", "heaviside", "ldexp", "logaddexp", "logaddexp2"]


def _base(lib):
    return lib.arange(1., 9., dtype=lib.float64) / 10 + 0.05


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:      # noqa: BLE001 (the type is what is compared)
        return type(e)
    return np.asarray(r.detach().numpy() if hasattr(r, "detach") else r)


def _same(lib_case):
    t = _outcome(lambda: lib_case(torch))
    p = _outcome(lambda: lib_case(ptcore))
    if isinstance(t, type):
        assert p is t, (t, p)
    else:
        assert not isinstance(p, type), f"ptcore raised {p.__name__}, torch gave values"
        np.testing.assert_allclose(p, t, rtol=1e-12, atol=0)
    return t


@pytest.mark.parametrize("name", BINARY)
def test_out_partly_over_an_input_is_refused(name):
    def case(lib):
        b = _base(lib)
        return getattr(lib, name)(b[:6], b[2:8], out=b[1:7])
    assert _same(case) is RuntimeError


@pytest.mark.parametrize("name", BINARY)
def test_out_that_is_an_input_is_allowed(name):
    def case(lib):
        b, c = _base(lib), _base(lib).flip(0)
        getattr(lib, name)(b, c, out=b)
        getattr(lib, name)(c, b, out=b)
        return b
    assert not isinstance(_same(case), type)


@pytest.mark.parametrize("name", ["heaviside", "logaddexp", "igamma"])
def test_out_with_overlapping_elements_is_refused(name):
    def case(lib):
        b = _base(lib)
        return getattr(lib, name)(b[:4], b[4:], out=lib.zeros(1, dtype=lib.float64).expand(4))
    assert _same(case) is RuntimeError


@pytest.mark.parametrize("name", ["igamma_", "igammac_", "heaviside_"])
def test_inplace_partly_over_the_other_is_refused(name):
    def case(lib):
        b = _base(lib)
        return getattr(b[:6], name)(b[2:8])
    assert _same(case) is RuntimeError


@pytest.mark.parametrize("name", ["igamma_", "igammac_", "heaviside_"])
def test_inplace_with_itself_is_allowed(name):
    def case(lib):
        b = _base(lib)
        return getattr(b, name)(b)
    assert not isinstance(_same(case), type)


def test_inplace_other_of_one_element_inside_self_is_refused():
    def case(lib):
        b = _base(lib)
        return b.heaviside_(b[:1])
    assert _same(case) is RuntimeError


def test_bernoulli_probabilities_partly_over_self_are_refused():
    def case(lib):
        b = _base(lib)
        return b[:6].bernoulli_(b[2:8])
    assert _same(case) is RuntimeError
    # the probabilities being self's own memory is allowed (values are random: only accepted)
    for lib in (torch, ptcore):
        b = _base(lib)
        b.bernoulli_(b)
        assert set(b.tolist()) <= {0.0, 1.0}
