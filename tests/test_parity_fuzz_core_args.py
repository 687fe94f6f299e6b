"""Argument forms and edge cases of the core ops, compared with torch.

Found by differential fuzzing against torch (the "fixlist" pass): which
tensors torch's argument parser takes for Number / int / SymInt / int[]
parameters, keyword names, exception types, output strides and the
sorting/searching family on edge cases.
"""
import pytest

torch = pytest.importorskip("torch")
import numpy as np

import ptcore


def _both(fn):
    """Run ``fn(lib)`` for torch and ptcore: ("ok", value) or (exception type name, None)."""
    out = []
    for lib in (torch, ptcore):
        try:
            out.append(("ok", fn(lib)))
        except Exception as e:        # noqa: BLE001 - the type is what is compared
            out.append((type(e).__name__, None))
    return out


def _same_outcome(fn):
    (kt, vt), (kp, vp) = _both(fn)
    assert kp == kt, f"torch: {kt}, ptcore: {kp}"
    if kt == "ok" and vt is not None:
        np.testing.assert_allclose(np.asarray(vp.tolist() if hasattr(vp, "tolist") else vp,
                                              dtype=float),
                                   np.asarray(vt.tolist() if hasattr(vt, "tolist") else vt,
                                              dtype=float))


# -- Tensor arguments for Number / int / SymInt / int[] parameters ------------------
_ARGS = {
    "0d_int": lambda lib: lib.tensor(2),
    "0d_float": lambda lib: lib.tensor(2.0),
    "1el_int": lambda lib: lib.tensor([2]),
    "1el_float": lambda lib: lib.tensor([2.0]),
    "0d_grad": lambda lib: lib.tensor(2.0, requires_grad=True),
    "2el_int": lambda lib: lib.tensor([1, 1]),
}

_CALLS = {
    "addmm_beta": lambda lib, v: lib.addmm(lib.ones(2, 2), lib.ones(2, 2), lib.ones(2, 2), beta=v),
    "addmm_alpha": lambda lib, v: lib.addmm(lib.ones(2, 2), lib.ones(2, 2), lib.ones(2, 2),
                                            alpha=v),
    "addmm_": lambda lib, v: lib.ones(2, 2).addmm_(lib.ones(2, 2), lib.ones(2, 2), alpha=v),
    "addmv": lambda lib, v: lib.addmv(lib.ones(2), lib.ones(2, 2), lib.ones(2), beta=v),
    "addbmm": lambda lib, v: lib.addbmm(lib.ones(2, 2), lib.ones(3, 2, 2), lib.ones(3, 2, 2),
                                        alpha=v),
    "baddbmm": lambda lib, v: lib.baddbmm(lib.ones(3, 2, 2), lib.ones(3, 2, 2),
                                          lib.ones(3, 2, 2), beta=v),
    "addr": lambda lib, v: lib.addr(lib.ones(2, 2), lib.ones(2), lib.ones(2), alpha=v),
    "index_add_alpha": lambda lib, v: lib.ones(3).index_add(0, lib.tensor([1]), lib.ones(1),
                                                            alpha=v),
    "logit_eps": lambda lib, v: lib.logit(lib.full((3,), 0.5), eps=v),
    "full_like": lambda lib, v: lib.full_like(lib.ones(2), v),
    "fill_diagonal_": lambda lib, v: lib.zeros(2, 2).fill_diagonal_(v),
    "renorm_p": lambda lib, v: lib.ones(2, 2).renorm(v, 0, 1.0),
    "cross_dim": lambda lib, v: lib.cross(lib.ones(3, 3), lib.ones(3, 3), dim=v - 1),
    "topk_k": lambda lib, v: lib.arange(5.0).topk(v).values,
    "kthvalue_k": lambda lib, v: lib.arange(5.0).kthvalue(v).values,
    "bincount_minlength": lambda lib, v: lib.tensor([1]).bincount(minlength=v),
    "sum_dim": lambda lib, v: lib.ones(2, 3, 4).sum(v),
    "sum_dim_list": lambda lib, v: lib.ones(2, 3, 4).sum((0, v)),
    "mean_dim": lambda lib, v: lib.ones(2, 3, 4).mean(v),
    "amax_dim": lambda lib, v: lib.ones(2, 3, 4).amax(v),
    "logsumexp_dim": lambda lib, v: lib.ones(2, 3, 4).logsumexp(v),
    "var_mean_dim": lambda lib, v: lib.var_mean(lib.ones(2, 3, 4), v)[0],
    "count_nonzero_dim": lambda lib, v: lib.ones(2, 3, 4).count_nonzero(v),
    "prod_dim": lambda lib, v: lib.ones(2, 3, 4).prod(v),
    "all_dim": lambda lib, v: lib.ones(2, 3, 4).all(v),
    "cumsum_dim": lambda lib, v: lib.ones(2, 3, 4).cumsum(v),
    "narrow_start": lambda lib, v: lib.arange(6.0).narrow(0, v, 2),
}


@pytest.mark.parametrize("arg", sorted(_ARGS))
@pytest.mark.parametrize("call", sorted(_CALLS))
def test_tensor_as_scalar_parameter(call, arg):
    _same_outcome(lambda lib: _CALLS[call](lib, _ARGS[arg](lib)))


# -- isin with the limited unsigned types and a number --------------------------------
@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("test", [2, 2.5, -1, 65535, 0])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_limited_unsigned_number(dt, test, invert):
    def f(lib):
        a = lib.tensor([0, 1, 2, 3, 65535], dtype=getattr(lib, dt))
        return lib.isin(a, test, invert=invert)
    _same_outcome(f)


@pytest.mark.parametrize("dt", ["uint16", "uint64"])
def test_isin_limited_unsigned_tensor_still_not_implemented(dt):
    _same_outcome(lambda lib: lib.isin(lib.tensor([1, 2], dtype=getattr(lib, dt)),
                                       lib.tensor([2], dtype=getattr(lib, dt))))


# -- keyword names ---------------------------------------------------------------------
def test_resize_as_keyword_is_the_template():
    _same_outcome(lambda lib: tuple(lib.ones(2).resize_as_(the_template=lib.zeros(3)).shape))
    _same_outcome(lambda lib: tuple(lib.ones(2).resize_as_(other=lib.zeros(3)).shape))


def _dim_order_cases():
    rng = np.random.default_rng(0)
    cases = [((2, 3), None, False), ((2, 1, 5, 7), (0, 2, 1, 3), False),
             ((2, 1, 5, 7), (0, 2, 3, 1), False), ((1, 2, 3, 4), (0, 2, 3, 1), "cl"),
             ((1, 2, 3, 4), None, "cl"), ((2, 1, 5, 7), None, "c"), ((2, 3), None, "bad"),
             ((2, 3), None, "badlist"), ((2, 1, 5, 7), None, [])]
    for _ in range(60):
        nd = int(rng.integers(0, 5))
        shape = tuple(int(s) for s in rng.choice([1, 1, 2, 3], nd))
        cases.append((shape, tuple(int(p) for p in rng.permutation(nd)) or None,
                      bool(rng.integers(0, 2))))
    return cases


@pytest.mark.parametrize("shape,perm,check", _dim_order_cases())
def test_dim_order_and_ambiguity_check(shape, perm, check):
    def f(lib):
        t = lib.empty(shape)
        if perm is not None:
            t = t.permute(*perm)
        ac = {"cl": [lib.contiguous_format, lib.channels_last], "c": [lib.contiguous_format],
              "bad": "x", "badlist": [1]}.get(check, check) if not isinstance(check, list) \
            else check
        return t.dim_order(ambiguity_check=ac)
    _same_outcome(f)
