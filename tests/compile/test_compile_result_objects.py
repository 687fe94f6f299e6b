"""What a compiled program may return besides tensors and builtin containers:
types registered with ``utils._pytree`` (Hugging Face's ``ModelOutput``),
dataclasses, and other objects the program made (Hugging Face's
``DynamicCache``: a new object of the type each call, its attributes rebuilt).
An object the program received and changed is an effect the graph cannot
replay: such a program runs eagerly, with the exact eager result."""
import collections
import dataclasses

import pytest

import ptcore
from ptcore.utils import _pytree



X = ptcore.arange(6.0).reshape(2, 3)


class Registered(collections.OrderedDict):
    pass


_pytree.register_pytree_node(
    Registered, lambda o: (list(o.values()), list(o.keys())),
    lambda values, keys: Registered(zip(keys, values)))


@dataclasses.dataclass
class Out:
    loss: object
    logits: object = None
    n: int = 0


class Layer:
    def __init__(self, k):
        self.keys = k
        self.ready = True


class Cache:
    def __init__(self):
        self.layers = []
        self.kind = Layer


def _graphs(fn, *args):
    e = ptcore._dynamo.explain(fn)(*args)
    return e.graph_count, e.graph_break_count


def test_registered_pytree_type():
    def f(a):
        return Registered(loss=a.sum(), logits=a * 2)
    c = ptcore.compile(f)
    for _ in range(3):
        r = c(X)
        assert type(r) is Registered and list(r) == ["loss", "logits"]
        assert ptcore.equal(r["logits"], X * 2) and r["loss"].item() == 15.0
    assert _graphs(f, X) == (1, 0)


def test_dataclass():
    def f(a):
        return Out(loss=a.mean(), logits=a.exp(), n=3)
    c = ptcore.compile(f)
    for _ in range(3):
        r = c(X)
        assert type(r) is Out and r.n == 3 and ptcore.allclose(r.logits, X.exp())
    assert _graphs(f, X) == (1, 0)


def test_object_made_by_the_program_is_rebuilt_each_call():
    def f(a):
        cache = Cache()
        for i in range(2):
            cache.layers.append(Layer(a * (i + 1)))
        return a.sum(), cache
    c = ptcore.compile(f)
    seen = []
    for k in range(3):
        x = X + k
        s, cache = c(x)
        assert type(cache) is Cache and cache.kind is Layer
        assert [type(layer) for layer in cache.layers] == [Layer, Layer]
        assert ptcore.equal(cache.layers[1].keys, x * 2) and cache.layers[0].ready is True
        seen.append(cache)
    assert len({id(o) for o in seen}) == 3     # a new object each call (all held)
    assert _graphs(f, X) == (1, 0)


def test_changed_input_object_runs_eagerly():
    def f(a, cache):
        cache.layers.append(Layer(a + 1))
        return cache
    c = ptcore.compile(f)
    box = Cache()
    for k in range(3):
        out = c(X, box)
        assert out is box and len(box.layers) == k + 1
    assert _graphs(f, X, Cache())[1] >= 1


def test_module_output_with_cache_like_object_trains():
    class M(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ptcore.nn.Linear(3, 3)

        def forward(self, a):
            h = self.lin(a)
            cache = Cache()
            cache.layers.append(Layer(h))
            return Out(loss=h.pow(2).mean(), logits=h), cache

    m = M()
    c = ptcore.compile(m)
    for _ in range(3):
        m.zero_grad()
        out, cache = c(X)
        out.loss.backward()
        got = m.lin.weight.grad.clone()
        m.zero_grad()
        ref, _ = m(X)
        ref.loss.backward()
        assert ptcore.allclose(got, m.lin.weight.grad)
        assert ptcore.allclose(cache.layers[0].keys, ref.logits)
