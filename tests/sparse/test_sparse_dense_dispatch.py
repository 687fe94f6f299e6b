"""Dense ops while a sparse tensor lives, and sparse ops with dense partners, against
torch: a sparse tensor does not switch the ``__torch_function__`` layer on (the dispatch
entries find it among their arguments), so these calls take the entries' argument test,
the operators' C fast paths (which leave a sparse operand to the general path), and the
core methods that are entries on the sparse class only."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

_DENSE = np.array([[0.0, 1.5, 0.0, -2.0], [3.0, 0.0, 0.0, 0.5],
                   [0.0, 0.0, -1.0, 0.0], [4.0, 0.0, 2.5, 0.0]])
_OTHER = np.arange(16, dtype=np.float64).reshape(4, 4) / 7.0 - 1.0


def _np(t):
    if getattr(t, "is_sparse", False) or getattr(t, "is_sparse_csr", False):
        t = t.to_dense()
    return t.detach().numpy()


def _pair(L, layout="coo"):
    s = L.tensor(_DENSE).to_sparse() if layout == "coo" else L.tensor(_DENSE).to_sparse_csr()
    return s, L.tensor(_OTHER)


def _both(fn, layout="coo"):
    out = []
    for L in (ptcore, torch):
        s, d = _pair(L, layout)
        out.append(fn(L, s, d))
    return out


def _assert_same(fn, layout="coo"):
    a, b = _both(fn, layout)
    assert bool(getattr(a, "is_sparse", False)) == bool(getattr(b, "is_sparse", False))
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-12)


def test_the_layer_stays_off_while_a_sparse_tensor_lives():
    from ptcore._dispatch import dispatcher as D
    on, swapped = D.on[0], D._core_swapped[0]
    if on:
        pytest.skip("another test left a dispatch layer on")
    s, d = _pair(ptcore)
    assert not D.on[0] and D._core_swapped[0] == swapped
    assert D.arg_scan[0] and ptcore._C._layout_live_count() >= 1
    # the dense class keeps its C view method; the sparse class has the entry
    assert ("view" in vars(ptcore.Tensor)) == swapped and "view" in vars(type(s))
    del s


@pytest.mark.parametrize("name", ["add", "sub", "mul", "matmul", "view", "reshape", "clone",
                                  "t", "expand", "getitem", "setitem", "mlp"])
def test_dense_ops_while_a_sparse_tensor_lives(name):
    def run(L, s, d):
        a = d + 1
        if name == "add":
            return a + d
        if name == "sub":
            return a - d
        if name == "mul":
            return a * d
        if name == "matmul":
            return a @ d
        if name == "view":
            return a.view(-1)
        if name == "reshape":
            return a.reshape(2, 8)
        if name == "clone":
            return a.clone()
        if name == "t":
            return a.t()
        if name == "expand":
            return a[:1].expand(3, 4)
        if name == "getitem":
            return a[L.tensor([0, 2])]
        if name == "setitem":
            a[L.tensor([1, 3])] = 0.25
            return a
        w = (d * 0.1).requires_grad_()
        h = L.nn.functional.relu(L.nn.functional.linear(a, w))
        h.sum().backward()
        return w.grad
    _assert_same(run)


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("expr", ["d @ s", "s @ d", "d.matmul(s)", "L.mm(s, d)", "L.mm(d, s)",
                                  "s @ d[0]", "L.sparse.mm(s, d)", "L.addmm(d, s, d)"])
def test_products_with_dense_partners_as_torch(expr, layout):
    _assert_same(lambda L, s, d: eval(expr), layout)


@pytest.mark.parametrize("expr", ["d + s", "L.add(d, s)", "d.add(s)", "d - s", "d.sub(s)",
                                  "d * s", "s * d", "s.mul(d)", "L.mul(d, s)", "s + s",
                                  "-s", "s * 2.0", "2.0 * s", "s / 2.0", "L.relu(s)",
                                  "s.sum()", "L.stack([s, s])"])
def test_sparse_ops_and_operators_with_dense_partners_as_torch(expr):
    _assert_same(lambda L, s, d: eval(expr))


@pytest.mark.parametrize("op", ["+=", "-="])
def test_in_place_dense_with_a_sparse_operand_as_torch(op):
    def run(L, s, d):
        e = d.clone()
        exec(f"e {op} s")
        return e
    _assert_same(run)


@pytest.mark.parametrize("expr", ["s.t()", "s.transpose(0, 1)", "s.clone()", "s.detach()",
                                  "s.double()", "s.float()", "s.permute(1, 0)", "s.select(0, 1)",
                                  "s.unsqueeze(0)", "s.coalesce()"])
def test_core_methods_of_a_sparse_tensor_as_torch(expr):
    _assert_same(lambda L, s, d: eval(expr))


@pytest.mark.parametrize("expr", ["s.view(-1)", "s.reshape(-1)", "s + d", "d[s]",
                                  "d.type_as(s)", "L.where(d > 0, d, s)", "d / s"])
def test_errors_as_torch(expr):
    errs = []
    for L in (ptcore, torch):
        s, d = _pair(L)
        with pytest.raises(Exception) as ei:
            eval(expr)
        errs.append(type(ei.value))
    assert errs[0] is errs[1]


def test_a_mode_sees_sparse_calls_as_torch():
    seen = []
    for L in (ptcore, torch):
        names = []

        class Mode(L.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                names.append(getattr(func, "__name__", ""))
                return func(*args, **(kwargs or {}))
        s, d = _pair(L)
        with Mode():
            r = L.mm(s, d)
        seen.append(("mm" in names, _np(r)))
    assert seen[0][0] and seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-12)


def test_sparse_calls_with_an_overriding_subclass_alive():
    # the protocol's layer on (for another class): a sparse argument still reaches its class
    class Sub(ptcore.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)
    keep = ptcore.ones(2).as_subclass(Sub)
    s, d = _pair(ptcore)
    ts, td = _pair(torch)
    np.testing.assert_allclose(_np(d @ s), _np(td @ ts), rtol=1e-12)
    np.testing.assert_allclose(_np(d + s), _np(td + ts), rtol=1e-12)
    assert type(s.t()).__name__ == "SparseTensor"
    with pytest.raises(NotImplementedError):
        s.view(-1)
    assert type(keep + 1) is Sub


def test_sparse_gradient_accumulates_with_a_dense_one_as_torch():
    res = []
    for L in (ptcore, torch):
        emb = L.nn.Embedding(5, 3, sparse=True)
        with L.no_grad():
            emb.weight.copy_(L.tensor(np.arange(15, dtype=np.float32).reshape(5, 3)))
        idx = L.tensor([0, 2, 2])
        emb(idx).sum().backward()
        emb(idx).pow(2).sum().backward()
        g = emb.weight.grad
        res.append(_np(g.coalesce() if g.is_sparse else g))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-6)


def test_sparse_calls_with_another_layer_on_as_torch():
    # (the profiler's layer on, the protocol's off: the entry still routes the sparse call)
    res = []
    for L in (ptcore, torch):
        s, d = _pair(L)
        with L.profiler.profile():
            r = (d @ s, d + s, s.t(), L.mm(s, d))
        res.append([_np(x) for x in r])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)
