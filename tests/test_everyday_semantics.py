"""Everyday tensor semantics as scripts and notebooks write them (indexing
with NumPy values, Python protocols, reprs users see), against PyTorch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _same(p, t):
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(p.shape) == tuple(t.shape)
    np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.parametrize("index", [
    lambda: np.array([[True, False, True, False]] * 3),      # a 2-D mask, not a tuple of rows
    lambda: np.array([[0, 2], [1, 1]]),
    lambda: (np.array([[0], [2]]), np.array([1, 3])),        # broadcast index arrays
    lambda: (np.array([0, 2]), slice(None), np.array([1, 3])),
    lambda: (Ellipsis, np.array([0, 4])),
])
def test_numpy_array_indices(index):
    base = np.arange(60).reshape(3, 4, 5)
    p, t = ptcore.tensor(base), torch.tensor(base)
    _same(p[index()], t[index()])
    p[index()] = -1
    t[index()] = -1
    _same(p, t)


@pytest.mark.parametrize("items", [[torch.tensor(2), 3], [True, 2], [torch.tensor([4])], [-1]])
def test_size_from_tensors_and_bools(items):
    conv = [ptcore.tensor(x.tolist()) if isinstance(x, torch.Tensor) else x for x in items]
    p, t = ptcore.Size(conv), torch.Size(items)
    assert tuple(p) == tuple(t)
    assert [type(v) for v in p] == [type(v) for v in t]


@pytest.mark.parametrize("item", [2.5, "a", None, 1j])
def test_size_rejects_non_ints(item):
    with pytest.raises(TypeError) as t_err:
        torch.Size([1, item])
    with pytest.raises(TypeError) as p_err:
        ptcore.Size([1, item])
    assert "(item 1 is" in str(t_err.value) and "(item 1 is" in str(p_err.value)
    with pytest.raises(TypeError):
        ptcore.Size([ptcore.tensor(2.0)])


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"])
def test_iinfo_repr(name):
    assert repr(ptcore.iinfo(getattr(ptcore, name))) == repr(torch.iinfo(getattr(torch, name)))


_GRAD_FN_CASES = [
    "1 - x", "2 ** x", "x ** y", "x ** 2", "x.norm()", "x.norm(dim=0)", "torch.norm(x, p=1)",
    "x.square()", "x.log1p()", "x.log10()", "torch.outer(v, v)",
    "m @ v", "v @ m", "v @ v", "m @ m", "b @ b", "b @ m", "torch.matmul(b, v)", "m @ b",
    "torch.nn.functional.pad(x, (1, 1))", "torch.nn.functional.pad(x[None], (1, 1), mode='reflect')",
    "torch.nn.functional.pad(x[None, None], (1, 1, 1, 1), mode='replicate')",
    "torch.nn.functional.embedding(torch.tensor([[0, 1]]), x)",
    "torch.nn.functional.embedding(torch.tensor([0, 1]), x, padding_idx=0)",
]


@pytest.mark.parametrize("expr", _GRAD_FN_CASES)
def test_grad_fn_names_as_torch(expr):
    """The grad_fn name print(tensor) shows."""
    names = []
    for mod in (torch, ptcore):
        env = dict(torch=mod,
                   x=mod.tensor([[1., 2., 3.], [0.5, 0.2, 0.1]], requires_grad=True),
                   y=mod.tensor([[2., 1., 0.5], [1., 3., 2.]], requires_grad=True),
                   m=mod.ones(2, 2, requires_grad=True), v=mod.ones(2, requires_grad=True),
                   b=mod.ones(3, 2, 2, requires_grad=True))
        out = eval(expr, env)
        names.append(type(out.grad_fn).__name__)
        assert repr(out).split("grad_fn=")[1] == f"<{names[-1]}>)"
    assert names[0] == names[1]


@pytest.mark.parametrize("kw", [{}, dict(padding_idx=1), dict(scale_grad_by_freq=True),
                                dict(padding_idx=-1, scale_grad_by_freq=True), dict(sparse=True)])
def test_embedding_one_node_gradients(kw):
    w0 = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    grads = []
    for mod in (torch, ptcore):
        w = mod.tensor(w0, requires_grad=True)
        out = mod.nn.functional.embedding(mod.tensor([[0, 1, 1], [4, 0, 1]]), w, **kw)
        assert type(out.grad_fn).__name__ == "EmbeddingBackward0"
        (out * mod.arange(18.).view(2, 3, 3)).sum().backward()
        grads.append(w.grad.to_dense().numpy() if kw.get("sparse") else w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_embedding_double_backward():
    w0 = np.random.RandomState(1).randn(4, 2).astype(np.float32)
    grads = []
    for mod in (torch, ptcore):
        w = mod.tensor(w0, requires_grad=True)
        out = mod.nn.functional.embedding(mod.tensor([0, 2, 0]), w)
        g, = mod.autograd.grad((out ** 3).sum(), w, create_graph=True)
        g.sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def _plain_subclasses():
    """(torch, ptcore) pairs of a subclass that keeps the default
    __torch_function__, made per test: a class alive for the whole session
    would keep ptcore's dispatch layer on for every later test."""
    class _TorchPlain(torch.Tensor):
        pass

    class _Plain(ptcore.Tensor):
        pass
    return ((torch, _TorchPlain), (ptcore, _Plain))


def _made_with_new(base):
    class Tagged(base):
        @staticmethod
        def __new__(cls, data):
            return base._make_subclass(cls, data)

        def __init__(self, data):
            self.tag = "t"
    return Tagged


@pytest.mark.parametrize("expr", [
    "x + 1", "1 + x", "x.sum()", "x[0]", "x.view(2)", "x.clone()", "x.detach()", "torch.add(x, 1)",
    "torch.cat([x, torch.ones(2)])", "torch.ones(2) * x", "torch.nn.functional.relu(x)", "x.max(0)[0]",
    "x.split(1)[1]", "x.float()", "torch.where(x > 1, x, 0.)", "x > 1", "torch.zeros_like(x)",
])
@pytest.mark.parametrize("how", ["as_subclass", "make_subclass"])
def test_subclass_kept_through_ops(expr, how):
    """A Tensor subclass that inherits the default __torch_function__ gets
    its own type back from every op, as torch's."""
    names = []
    for mod, plain in _plain_subclasses():
        if how == "as_subclass":
            x = mod.tensor([1.0, 2.0]).as_subclass(plain)
        else:
            x = _made_with_new(mod.Tensor)(mod.tensor([1.0, 2.0]))
            assert x.tag == "t"
        out = eval(expr, dict(torch=mod, x=x))
        names.append("sub" if type(out) is type(x) else type(out).__name__)
    assert names[0] == names[1] == "sub"


def test_parameter_results_and_parameter_of_subclass():
    for mod, plain in _plain_subclasses():
        p = mod.nn.Parameter(mod.ones(2))
        assert type(p * 2) is mod.Tensor and type(p[0]) is mod.Tensor
        q = mod.nn.Parameter(mod.ones(2).as_subclass(plain))
        assert type(q) is plain and isinstance(q, mod.nn.Parameter) and q.requires_grad and q.is_leaf
        m = mod.nn.Module()
        m.w = q
        assert [n for n, _ in m.named_parameters()] == ["w"]
        (q * q).sum().backward()
        assert q.grad.tolist() == [2.0, 2.0]


def _constructed_subclasses(L):
    """Tensor subclasses that construct themselves in ``__new__`` (torchvision's
    tv_tensors: ``BoundingBoxes(data, format=..., canvas_size=...)``), one with
    its own ``__init__``, and the legacy constructor; what each call gives."""
    class Doubled(L.Tensor):
        def __new__(cls, data):
            return L.as_tensor(data).mul(2).as_subclass(cls)

    class Boxes(L.Tensor):
        def __new__(cls, data, extra=None, *, canvas_size=None):
            t = L.Tensor._make_subclass(cls, data, False)
            t.extra, t.canvas_size = extra, canvas_size
            return t

    class WithInit(L.Tensor):
        def __init__(self, *args, **kwargs):
            super().__init__()

    class ViaSuper(L.Tensor):
        @staticmethod
        def __new__(cls, x, *args, **kwargs):
            return super().__new__(cls, x, *args, **kwargs)

    class NotAnInstance(L.Tensor):
        def __new__(cls, n):
            return L.ones(n)

    b = Boxes(L.ones(2), extra=1, canvas_size=(3, 4))
    made = [Doubled(L.tensor([1.0, 2.0])), b, WithInit([1.0, 2.0]), ViaSuper([1.0, 2.0]),
            NotAnInstance(2)]
    t = L.ones(2)
    alias = L.Tensor(t)
    out = [(type(v).__name__, v.tolist(), str(v.dtype).split(".")[-1]) for v in made]
    out += [(b.extra, b.canvas_size), L.Tensor.__init__ is object.__init__,
            alias is not t and alias.data_ptr() == t.data_ptr(),
            tuple(L.Tensor(2, 3).shape), tuple(L.Tensor().shape),
            str(L.Tensor([1, 2]).dtype).split(".")[-1]]
    for bad in (lambda: ViaSuper([1.0], foo=1), lambda: L.Tensor(3.5)):
        try:
            bad()
            out.append("no error")
        except Exception as e:  # noqa: BLE001
            out.append(type(e).__name__)
    return out


def test_subclass_constructed_in_new_is_not_reinitialised():
    # the legacy constructor is Tensor.__new__ (Tensor has no __init__), so a
    # subclass's own __new__ is neither overwritten by nor refused for its arguments
    assert _constructed_subclasses(ptcore) == _constructed_subclasses(torch)


@pytest.mark.parametrize("expr", [
    "2 in L.ones(2, 3)", "1.0 in L.ones(2, 3)", "L.tensor([1.0, 1.0, 1.0]) in L.ones(2, 3)",
    "2 in L.tensor(2)", "L.tensor([2, 3]) in L.tensor([[1, 3]])", "True in L.tensor([0, 1])",
    "np.float32(1) in L.zeros(3)", "None in L.ones(2)", "'a' in L.ones(2)",
    "L.ones(2) in L.ones(3)",
])
def test_contains_is_any_equal_as_torch(expr):
    # ``x in t`` is ``(x == t).any()`` (rows of a 2-D tensor are not walked; a 0-d
    # tensor works); anything but a tensor or a number is torch's RuntimeError
    def run(L):
        try:
            return eval(expr)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
    assert run(ptcore) == run(torch)


@pytest.mark.parametrize("scalar", [np.bool_(True), np.int8(3), np.int32(-2), np.float16(1.5),
                                    np.float32(2.5), np.longdouble(1.5)],
                         ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("dt", ["int8", "bool", "float16", "float64"])
def test_numpy_scalar_operands_as_torch(scalar, dt):
    # torch's Scalar from a NumPy scalar: an integer one is an int, np.bool_ and every
    # floating one a double (np.bool_ was left to NumPy, which returned an ndarray;
    # np.longdouble recursed)
    def run(L):
        t = L.tensor([1, 0], dtype=getattr(L, dt))
        out = []
        for f in (lambda: t * scalar, lambda: scalar + t, lambda: L.add(t, scalar),
                  lambda: t == scalar, lambda: t < scalar, lambda: t - scalar,
                  lambda: t.clone().__iadd__(scalar), lambda: L.where(t > 0, scalar, t),
                  lambda: L.full((2,), scalar), lambda: L.result_type(t, scalar)):
            try:
                r = f()
            except Exception as e:  # noqa: BLE001
                out.append(type(e).__name__)
                continue
            if isinstance(r, (torch.Tensor, ptcore.Tensor)):
                out.append((type(r).__name__, str(r.dtype).split(".")[-1], r.tolist()))
            else:
                out.append(str(r).split(".")[-1])
        return out
    assert run(ptcore) == run(torch)


def _eval_in(L, expr, make_x):
    """``expr`` evaluated with ``L`` (ptcore or torch) and ``x = make_x(L)``:
    each result tensor as (dtype name, shape, values), or "TypeError"."""
    x = make_x(L)  # noqa: F841 - read by eval
    try:
        r = eval(expr)
    except TypeError:
        return "TypeError"
    rs = r if isinstance(r, tuple) else (r,)
    return [(str(t.dtype).split(".")[-1], tuple(t.shape), t.tolist()) for t in rs]


@pytest.mark.parametrize("expr", [
    "x.cumsum(axis=1)", "L.cumsum(x, axis=0)", "x.mean(axis=0, keepdims=True)",
    "L.softmax(x, axis=1)", "x.log_softmax(axis=0)", "L.cat([x, x], axis=1)",
    "L.stack([x, x], axis=1)", "x.argsort(axis=0)", "L.sort(x, axis=1).values",
    "x.topk(2, axis=0).indices", "L.median(x, axis=1).values", "x.cummax(axis=0).values",
    "x.quantile(0.5, axis=1, keepdims=True)", "L.gather(x, axis=1, index=L.zeros(2, 1, dtype=L.long))",
    "x.index_select(axis=1, index=L.tensor([0, 2]))", "L.diff(x, axis=1)",
    "L.add(x1=x, x2=x)", "L.sum(x=x)", "L.neg(a=x)", "L.linalg.norm(x, axis=0)",
    "L.cumsum(x, dim=0, axis=0)", "L.renorm(input=x, p=2, dim=0, maxnorm=100.0)",
])
def test_numpy_keyword_aliases_as_torch(expr):
    # torch's native functions and methods take NumPy's axis/keepdims/x/a/x1/x2
    # spellings of dim/keepdim/input/other (both spellings at once is a TypeError)
    assert (_eval_in(ptcore, expr, lambda L: L.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]]))
            == _eval_in(torch, expr, lambda L: L.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])))


@pytest.mark.parametrize("expr", [
    "x.permute(dims=(1, 0))", "L.permute(x, dims=(1, 0))", "x.reshape(shape=(3, 2))",
    "L.reshape(x, shape=(6,))", "x.view(size=(3, 2))", "x.view(dtype=L.int32)",
    "x.expand(size=(2, 2, 3))", "x.repeat(repeats=(2, 1))", "x.new_zeros(size=(2,))",
    "x.new_ones(size=(2, 1))", "x.clone().resize_(size=(3, 2))", "x.split(split_size=1)",
    "L.split(x, split_size_or_sections=[1, 2], dim=1)", "x.permute(1, 0, dims=(1, 0))",
])
def test_shape_keyword_forms_as_torch(expr):
    # torch's keyword spellings of the size arguments of the core shape methods
    assert (_eval_in(ptcore, expr, lambda L: L.arange(6.0).reshape(2, 3))
            == _eval_in(torch, expr, lambda L: L.arange(6.0).reshape(2, 3)))


def test_to_none_device_changes_nothing_as_torch():
    torch = pytest.importorskip("torch")

    def run(m):
        x = m.ones(2)
        out = []
        for a in [(None,), (None, m.float64), (None, None), (None, m.float64, True),
                  (None, False), ("cpu", True), ("cpu", m.float64, True)]:
            try:
                y = x.to(*a)
                out.append((str(y.dtype).split(".")[-1], y is x))
            except TypeError:
                out.append("TypeError")
        lin = m.nn.Linear(1, 1)
        out += [lin.to(None) is lin, str(lin.to(None, m.float64).weight.dtype).split(".")[-1]]
        return out
    assert run(ptcore) == run(torch)


def test_to_cpu_index_zero_is_the_cpu():
    x = ptcore.ones(2)
    assert x.to("cpu:0") is x and x.to(ptcore.device("cpu", 0)) is x
    lin = ptcore.nn.Linear(1, 1).to("cpu:0")
    assert lin.weight.device.type == "cpu"
