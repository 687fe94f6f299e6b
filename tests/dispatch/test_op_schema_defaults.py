"""Schemas with dtype and device defaults and one-tuple returns, as torch's parser and
printer read and write them (what ``custom_op`` infers for ``d: dtype = float32``,
``dev: device = device("cpu")`` and ``-> tuple[Tensor]``)."""
import pytest

import ptcore
from ptcore._dispatch import op_schema

torch = pytest.importorskip("torch")

SCHEMAS = [
    'foo(Tensor x, ScalarType d=float32, Device dev="cpu") -> ((Tensor))',
    "foo(Tensor x, ScalarType d=int64, ScalarType? e=None) -> (Tensor, Tensor)",
    "foo(Tensor x, ScalarType d=bfloat16) -> ((Tensor, Tensor))",
    "foo(Tensor(a!) x) -> Tensor(a!)",
    "foo(Tensor x) -> ()",
]


@pytest.mark.parametrize("text", SCHEMAS)
def test_parse_and_print_as_torch(text):
    got, want = op_schema.parse(text), torch._C.parse_schema(text)
    assert str(got) == str(want)
    # (a device default compared by its text: the two libraries' device types differ)
    assert [(a.name, repr(a.default_value)) for a in got.arguments] == \
        [(a.name, repr(a.default_value)) for a in want.arguments]


def test_bound_dtype_default_is_the_dtype():
    s = op_schema.parse('foo(Tensor x, ScalarType d=float64, Device dev="cpu") -> Tensor')
    values, given = op_schema.bind(s, (ptcore.ones(1),), {})
    assert values["d"] is ptcore.float64 and values["dev"] == ptcore.device("cpu")
    assert given == {"x"}
    # a call passing the default leaves it out of the normalized call, as torch
    args, kwargs = op_schema.normalize(s, (ptcore.ones(1), ptcore.float64), {})
    assert len(args) == 1 and not kwargs


def test_custom_op_with_dtype_default_and_tuple_return():
    results = []
    for L, ns in ((torch, "ptc_schema_t"), (ptcore, "ptc_schema_p")):
        @L.library.custom_op(f"{ns}::cast", mutates_args=())
        def cast(x: L.Tensor, d: L.dtype = L.float32,
                 dev: L.device = L.device("cpu")) -> tuple[L.Tensor]:
            return (x.to(d).clone(),)
        r1, = cast(L.ones(2), L.float64)
        r2, = cast(L.ones(2))
        results.append((str(getattr(L.ops, ns).cast.default._schema).split("::")[1],
                        str(r1.dtype).split(".")[1], str(r2.dtype).split(".")[1]))
    assert results[0] == results[1]
