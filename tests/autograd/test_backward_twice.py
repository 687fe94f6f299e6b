"""A second backward through a graph without ``retain_graph``: torch frees
saved tensors only, so nodes that saved none (split, chunk, cat, neg, pad,
to() ...: sizes, dims, dtypes and devices in their closures) and custom
Functions that did not call ``save_for_backward`` run again, and the
gradients accumulate; nodes that saved tensors raise.  (The old OpenNMT
example backpropagates each chunk of one ``torch.split`` separately.)"""
import pytest

import ptcore

RUNS_AGAIN = {
    "split": lambda t, x: t.split(x, 2)[1],
    "chunk": lambda t, x: t.chunk(x, 2)[0],
    "cat": lambda t, x: t.cat([x, x]),
    "stack": lambda t, x: t.stack([x, x]),
    "neg": lambda t, x: -x,
    "pad": lambda t, x: t.nn.functional.pad(x, (1, 1)),
    "to_float64": lambda t, x: x.to(t.float64),
    "half": lambda t, x: x.half(),
    "view": lambda t, x: x.view(12),
    "expand": lambda t, x: x[None].expand(2, 4, 3),
    "narrow": lambda t, x: x.narrow(0, 1, 2),
    "sum": lambda t, x: x.sum(0),
    "cumsum": lambda t, x: x.cumsum(0),
    "add_scalar": lambda t, x: x + 1,
}
RAISES = {
    "relu": lambda t, x: x.relu(),
    "mul_scalar": lambda t, x: x * 2,
    "exp": lambda t, x: x.exp(),
    "softmax": lambda t, x: x.softmax(0),
    "index": lambda t, x: x[t.tensor([0, 2])],
}


def _twice(t, f):
    x = t.ones(4, 3, requires_grad=True)
    y = f(t, x)
    y.float().sum().backward()
    first = x.grad.clone()
    y.float().sum().backward()
    return first, x.grad


@pytest.mark.parametrize("name", sorted(RUNS_AGAIN))
def test_nodes_that_saved_nothing_run_again(name):
    first, second = _twice(ptcore, RUNS_AGAIN[name])
    assert ptcore.equal(second, 2 * first)


@pytest.mark.parametrize("name", sorted(RAISES))
def test_nodes_that_saved_tensors_raise(name):
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _twice(ptcore, RAISES[name])


@pytest.mark.parametrize("name", sorted(RUNS_AGAIN) + sorted(RAISES))
def test_as_torch(name):
    torch = pytest.importorskip("torch")
    f = RUNS_AGAIN.get(name) or RAISES[name]
    res = []
    for t in (torch, ptcore):
        try:
            res.append(_twice(t, f)[1].tolist())
        except RuntimeError:
            res.append("raises")
    assert res[0] == res[1]


def _functions(t):
    class Attr(t.autograd.Function):           # keeps a number on ctx
        @staticmethod
        def forward(ctx, x):
            ctx.k = 3
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k

    class Reads(t.autograd.Function):          # reads its saved tensor
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

    class Ignores(Reads):                      # saved one, never reads it
        @staticmethod
        def backward(ctx, g):
            return g * 5

    return Attr, Reads, Ignores


def test_custom_functions():
    Attr, Reads, Ignores = _functions(ptcore)
    for cls, want in ((Attr, 6.0), (Ignores, 10.0)):
        x = ptcore.ones(3, requires_grad=True)
        y = cls.apply(x)
        y.sum().backward()
        y.sum().backward()
        assert x.grad.tolist() == [want] * 3
    x = ptcore.ones(3, requires_grad=True)
    y = Reads.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.grad_fn.saved_tensors


def test_custom_functions_as_torch():
    torch = pytest.importorskip("torch")
    out = []
    for t in (torch, ptcore):
        row = []
        for cls in _functions(t):
            x = t.ones(3, requires_grad=True)
            y = cls.apply(x)
            y.sum().backward()
            try:
                y.sum().backward()
                row.append(x.grad.tolist())
            except RuntimeError:
                row.append("raises")
        out.append(row)
    assert out[0] == out[1]
