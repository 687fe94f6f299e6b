"""einsum follows torch's algorithm, so that every dtype gives torch's result: operands
aligned to the output labels then the contracted ones, a contracted label summed as soon
as no other remaining operand has it (a sum promotes integers and bools to int64, a
size-1 label is viewed away without one), pairs contracted left to right or, for three
or more operands while ``ptcore.backends.opt_einsum`` is enabled, in the order
``opt_einsum`` plans, as torch.einsum does.  Compared on seeded random equations
(ellipses, repeated labels, size-1 broadcasting, 1-4 operands) of every dtype family,
with the same exception types where torch refuses."""
import random

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

LETTERS = "abcdef"


def _random_case(rng, dtype):
    nops = rng.choice([1, 2, 2, 3, 4])
    sizes = {lab: rng.choice([1, 2, 3]) for lab in LETTERS}
    use_ell = rng.random() < 0.25
    ell = [rng.choice([1, 2, 3]) for _ in range(rng.randint(0, 2))]
    terms, shapes = [], []
    for _ in range(nops):
        labs = [rng.choice(LETTERS) for _ in range(rng.randint(0, 3))]
        shape = [sizes[lab] if rng.random() > 0.15 else 1 for lab in labs]
        for i, lab in enumerate(labs):          # a repeated label: equal sizes
            for j in range(i):
                if labs[j] == lab:
                    shape[i] = shape[j]
        term = "".join(labs)
        if use_ell and rng.random() < 0.7:
            k = rng.randint(0, len(ell))
            es = [s if rng.random() > 0.2 else 1 for s in ell[len(ell) - k:]]
            at = rng.randint(0, len(labs))
            term = "".join(labs[:at]) + "..." + "".join(labs[at:])
            shape = shape[:at] + es + shape[at:]
        terms.append(term)
        shapes.append(shape)
    eq = ",".join(terms)
    if rng.random() < 0.6:
        present = sorted(set("".join(terms).replace(".", "")))
        out = "".join(rng.sample(present, rng.randint(0, len(present))))
        if "..." in eq and rng.random() < 0.7:
            out = "..." + out
        eq += "->" + out
    nrng = np.random.default_rng(rng.randint(0, 1 << 30))
    arrays = []
    for s in shapes:
        a = nrng.standard_normal(s)
        if dtype == "bool":
            a = a > 0
        elif dtype in ("int8", "uint8", "int32", "int64"):
            a = (np.abs(a) * 3).astype(dtype)
        else:
            a = a.astype(dtype)
        arrays.append(np.asarray(a))
    return eq, arrays


def _run(lib, eq, arrays):
    try:
        return lib.einsum(eq, *[lib.from_numpy(a.copy()) if a.ndim else lib.tensor(a.item())
                                for a in arrays])
    except Exception as e:      # noqa: BLE001 - compared with torch's
        return e


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int8", "uint8",
                                   "bool"])
def test_random_equations_match_torch(dtype):
    rng = random.Random(dtype)
    for _ in range(150):
        eq, arrays = _random_case(rng, dtype)
        want, got = _run(torch, eq, arrays), _run(ptcore, eq, arrays)
        what = f"{eq} {[a.shape for a in arrays]} {dtype}"
        if isinstance(want, Exception):
            assert type(got).__name__ == type(want).__name__, (what, want, got)
            continue
        assert not isinstance(got, Exception), (what, got)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], what
        assert tuple(got.shape) == tuple(want.shape), what
        if dtype.startswith("float"):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5,
                                       err_msg=what)
        else:
            np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=what)


def test_contraction_order_follows_opt_einsum_as_torch():
    if not ptcore.backends.opt_einsum.is_available():
        pytest.skip("opt_einsum is not installed")
    rng = np.random.default_rng(0)
    # integer operands: a sum promotes to int64 and an elementwise product keeps int8, so
    # the contraction order decides the result's dtype and (with wrapping) its values
    arrays = [(rng.integers(0, 5, s)).astype(np.int8) for s in [(2, 3), (3,), (3, 4), (4, 2)]]
    eq = "ij,j,jk,kl->il"
    for enabled in (True, False):
        with ptcore.backends.opt_einsum.flags(enabled=enabled), \
                torch.backends.opt_einsum.flags(enabled=enabled):
            got, want = _run(ptcore, eq, arrays), _run(torch, eq, arrays)
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    for strategy in ("greedy", "optimal", "auto"):
        with ptcore.backends.opt_einsum.flags(strategy=strategy):
            assert ptcore.backends.opt_einsum.strategy == strategy
            np.testing.assert_array_equal(_run(ptcore, eq, arrays).numpy(),
                                          _run(torch, eq, arrays).numpy())


def test_opt_einsum_settings_as_torch():
    P, T = ptcore.backends.opt_einsum, torch.backends.opt_einsum
    assert (P.enabled, P.strategy) == (T.enabled, T.strategy)
    if not P.is_available():
        with pytest.raises(ValueError, match="not available"):
            P.enabled = True
        return
    with pytest.raises(ValueError, match="must be one of the following"):
        P.strategy = "fastest"
    with P.flags(enabled=False):
        assert P.enabled is False
        with pytest.raises(ValueError, match="not enabled"):
            P.strategy = "greedy"
    assert P.enabled is True and P.strategy == "auto"
    old = P.set_flags(None, "greedy")
    assert old == (True, "auto") and P.strategy == "greedy"
    P.strategy = "auto"
