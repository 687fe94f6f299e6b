"""``ptcore._higher_order_ops`` (torch's ``associative_scan``, ``scan``, ``map``,
``cond``, ``while_loop``) against torch: values (bit for bit where torch's order of
combinations is followed), pytrees, dims, reverse scans, gradients, and the
errors for bad arguments with torch's exception types."""
import numpy as np
import pytest

import ptcore
from ptcore._higher_order_ops import associative_scan, cond, map as hop_map, scan, while_loop

torch = pytest.importorskip("torch")
from torch._higher_order_ops.associative_scan import associative_scan as t_associative_scan  # noqa: E402
from torch._higher_order_ops.map import map as t_map  # noqa: E402
from torch._higher_order_ops.scan import scan as t_scan  # noqa: E402


def _pair(shape, seed=0, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ptcore.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _same(p, t, exact=True):
    p = p.detach().numpy()
    t = t.detach().numpy()
    assert p.shape == t.shape and p.dtype == t.dtype
    if exact:
        np.testing.assert_array_equal(p, t)
    else:
        np.testing.assert_allclose(p, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_sum_product_bitwise(n, reverse):
    p, t = _pair((n, 3), seed=n)
    for fn in (lambda a, b: a + b, lambda a, b: a * b, lambda a, b: ptcore.maximum(a, b)
               if isinstance(a, ptcore.Tensor) else torch.maximum(a, b)):
        _same(associative_scan(fn, p, 0, reverse=reverse, combine_mode="generic"),
              t_associative_scan(fn, t, 0, reverse=reverse, combine_mode="generic"))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
def test_associative_scan_dims(dim):
    p, t = _pair((3, 6, 5), seed=1)
    _same(associative_scan(lambda a, b: a + b, p, dim, combine_mode="generic"),
          t_associative_scan(lambda a, b: a + b, t, dim, combine_mode="generic"))


def test_associative_scan_pytree_linear_recurrence():
    # h_t = a_t * h_{t-1} + b_t, Mamba's selective scan, as a pytree of two tensors
    pa, ta = _pair((2, 9, 4), seed=2)
    pb, tb = _pair((2, 9, 4), seed=3)

    def combine(left, right):
        return left[0] * right[0], right[0] * left[1] + right[1]
    got = associative_scan(combine, (pa.sigmoid(), pb), 1, combine_mode="generic")
    want = t_associative_scan(combine, (ta.sigmoid(), tb), 1, combine_mode="generic")
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        _same(g, w, exact=False)      # (sigmoid may differ from torch's by an ulp)
    # against the sequential recurrence
    h = pb[:, 0]
    for k in range(1, 9):
        h = pa.sigmoid()[:, k] * h + pb[:, k]
        np.testing.assert_allclose(got[1][:, k].numpy(), h.numpy(), rtol=1e-5, atol=1e-6)
    d = {"a": pa.sigmoid(), "b": pb}
    got = associative_scan(lambda l, r: {"a": l["a"] * r["a"], "b": r["a"] * l["b"] + r["b"]},
                           d, 1, combine_mode="generic")
    assert set(got) == {"a", "b"}
    _same(got["b"], want[1], exact=False)


def test_associative_scan_generic_non_pointwise_combine():
    # a product of 2x2 matrices: generic mode calls the function on single slices (vmap)
    p, t = _pair((6, 2, 2), seed=4)
    _same(associative_scan(lambda a, b: b @ a, p, 0, combine_mode="generic"),
          t_associative_scan(lambda a, b: b @ a, t, 0, combine_mode="generic"), exact=False)


def test_associative_scan_gradients():
    p, t = _pair((7, 3), seed=5, dtype=np.float64)
    p.requires_grad_()
    t.requires_grad_()
    w = np.random.default_rng(6).standard_normal((7, 3))
    (associative_scan(lambda a, b: a * b + a, p, 0, combine_mode="generic")
     * ptcore.from_numpy(w)).sum().backward()
    (t_associative_scan(lambda a, b: a * b + a, t, 0, combine_mode="generic")
     * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_associative_scan_errors_match_torch():
    p, t = _pair((4, 3))
    add = lambda a, b: a + b  # noqa: E731
    cases = [
        ((add, "T", 0), {}),                              # pointwise needs CUDA
        ((add, "T", 0), {"combine_mode": "other"}),
        ((add, "T", 1.0), {"combine_mode": "generic"}),
        ((add, "T", 0), {"reverse": 1, "combine_mode": "generic"}),
        ((1, "T", 0), {"combine_mode": "generic"}),
        ((add, "E", 0), {"combine_mode": "generic"}),    # zero-size scan dimension
    ]
    for (fn, x, dim), kw in cases:
        px = {"T": p, "E": p[:0]}.get(x, x) if isinstance(x, str) or x is None else x
        tx = {"T": t, "E": t[:0]}.get(x, x) if isinstance(x, str) or x is None else x
        with pytest.raises(Exception) as want:
            t_associative_scan(fn, tx, dim, **kw)
        with pytest.raises(type(want.value)):
            associative_scan(fn, px, dim, **kw)
    # where torch fails by accident (no leaves, a leaf that is no tensor): a clear ValueError
    for xs in ([], None, "x", [p, 1.0]):
        with pytest.raises(ValueError, match="xs leaf|Tensor"):
            associative_scan(add, xs, 0, combine_mode="generic")


def _cumsum(c, x):
    c = c + x
    return c, c.clone()


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_scan_values_and_reverse(reverse, dim):
    p, t = _pair((5, 6, 3), seed=7)
    pi, ti = _pair((6, 3) if dim == 0 else (5, 3), seed=8)
    pc, py = scan(_cumsum, pi, p, dim=dim, reverse=reverse)
    tc, ty = t_scan(_cumsum, ti, t, dim=dim, reverse=reverse)
    _same(pc, tc)
    _same(py, ty)


def test_scan_pytrees_and_gradients():
    p, t = _pair((6, 4), seed=9, dtype=np.float64)
    pw, tw = _pair((4, 4), seed=10, dtype=np.float64)
    for x in (p, t, pw, tw):
        x.requires_grad_()

    def rnn(lib):
        def step(carry, x):
            h = lib.tanh(x["in"] @ carry["w"] + carry["h"])
            return {"h": h, "w": carry["w"].clone()}, (h.sum(), h * 2)
        return step
    pinit = {"h": ptcore.zeros(4, dtype=ptcore.float64), "w": pw}
    tinit = {"h": torch.zeros(4, dtype=torch.float64), "w": tw}
    pc, (ps, py) = scan(rnn(ptcore), pinit, {"in": p})
    tc, (ts, ty) = t_scan(rnn(torch), tinit, {"in": t})
    _same(pc["h"], tc["h"], exact=False)
    _same(ps, ts, exact=False)
    _same(py, ty, exact=False)
    (ps.sum() + py.pow(2).sum()).backward()
    (ts.sum() + ty.pow(2).sum()).backward()
    np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(pw.grad.numpy(), tw.grad.numpy(), rtol=1e-9)


def test_scan_empty_xs_and_errors():
    init = ptcore.zeros(2)
    assert scan(_cumsum, init, [])[0] is init and scan(_cumsum, init, [])[1] == []
    p, t = _pair((3, 2))
    bad = [
        ((_cumsum, "i", "x"), {"dim": 1.5}),
        ((_cumsum, "i", "x"), {"reverse": "no"}),
        ((3, "i", "x"), {}),
        ((_cumsum, [], "x"), {}),
        ((_cumsum, [1.0], "x"), {}),
        ((_cumsum, "i", "e"), {}),
        ((lambda c, x: (c.double(), x.clone()), "i", "x"), {}),     # carry's dtype changes
        ((lambda c, x: ((c, c), x.clone()), "i", "x"), {}),          # carry's structure changes
    ]
    for (fn, i, x), kw in bad:
        pi = {"i": ptcore.zeros(2)}.get(i, i) if isinstance(i, str) else i
        ti = {"i": torch.zeros(2)}.get(i, i) if isinstance(i, str) else i
        px = {"x": p, "e": [p, "s"]}[x]
        tx = {"x": t, "e": [t, "s"]}[x]
        with pytest.raises(Exception) as want:
            t_scan(fn, ti, tx, **kw)
        # (torch raises the carry's mismatches from its graph capture, as a RuntimeError
        # subclass of torch._dynamo)
        expected = RuntimeError if isinstance(want.value, RuntimeError) else type(want.value)
        with pytest.raises(expected):
            scan(fn, pi, px, **kw)


def test_map_values_pytrees_and_errors():
    pa, ta = _pair((4, 3), seed=11)
    pb, tb = _pair((4, 3), seed=12)
    pc, tc = _pair((3,), seed=13)
    _same(hop_map(lambda x, c: x * c + 1, pa, pc), t_map(lambda x, c: x * c + 1, ta, tc))
    got = hop_map(lambda xs, c: {"s": xs[0] + xs[1] + c, "m": xs[0] * xs[1]}, [pa, pb], pc)
    want = t_map(lambda xs, c: {"s": xs[0] + xs[1] + c, "m": xs[0] * xs[1]}, [ta, tb], tc)
    _same(got["s"], want["s"])
    _same(got["m"], want["m"])
    for px, tx in (([pa, 1.0], [ta, 1.0]), (pa[:0], ta[:0]), ([pa, pb[:3]], [ta, tb[:3]])):
        with pytest.raises(Exception) as w:
            t_map(lambda x: x, tx)
        with pytest.raises(type(w.value)):
            hop_map(lambda x: x, px)


def test_cond_and_while_loop_are_ptcores():
    assert cond is ptcore.cond and while_loop is ptcore.while_loop
    x = ptcore.arange(3.0)
    assert cond(x.sum() > 0, lambda v: v + 1, lambda v: v - 1, (x,)).tolist() == [1.0, 2.0, 3.0]
    i, s = while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2), (ptcore.tensor(0),
                                                                          ptcore.tensor(1.0)))
    assert int(i) == 4 and float(s) == 16.0

