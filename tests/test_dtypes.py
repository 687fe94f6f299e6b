"""dtypes, finfo/iinfo, type promotion and the default dtype, checked against PyTorch.

Every test that compares with torch is marked ``needs_torch`` and skips when
torch is not installed; the rest run on ptcore alone.
"""
import copy
import itertools
import pickle

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128"]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]
INT_NAMES = ["uint8", "int8", "int16", "int32", "int64"]


def pt(name):
    return getattr(ptcore, name)


def th(name):
    return getattr(torch, name)


def name_of(dt):
    """'float32' for ptcore.float32 or torch.float32."""
    s = str(dt)
    assert s.startswith(("ptcore.", "torch.")), s
    return s.split(".", 1)[1]


@pytest.fixture
def restore_default_dtype():
    old = ptcore.get_default_dtype()
    old_t = torch.get_default_dtype() if torch is not None else None
    yield
    ptcore.set_default_dtype(old)
    if torch is not None:
        torch.set_default_dtype(old_t)


# ---------------------------------------------------------------------------
# dtype objects
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_dtype_repr_and_str(name):
    d = pt(name)
    assert isinstance(d, ptcore.dtype)
    assert repr(d) == f"ptcore.{name}"
    assert str(d) == f"ptcore.{name}"


@pytest.mark.parametrize("alias,name", [
    ("half", "float16"), ("float", "float32"), ("double", "float64"), ("cfloat", "complex64"),
    ("cdouble", "complex128"), ("short", "int16"), ("int", "int32"), ("long", "int64"),
])
def test_dtype_aliases_are_the_same_object(alias, name):
    assert getattr(ptcore, alias) is pt(name)


def test_dtypes_are_distinct_and_hashable():
    ds = [pt(n) for n in NAMES]
    assert len(set(ds)) == len(NAMES)
    assert len({hash(d) for d in ds}) == len(NAMES)
    m = {d: n for d, n in zip(ds, NAMES)}
    assert m[ptcore.float32] == "float32"
    assert ptcore.float32 == ptcore.float
    assert ptcore.float32 != ptcore.float64


@pytest.mark.parametrize("name", NAMES)
def test_dtype_pickle_and_copy_keep_identity(name):
    d = pt(name)
    assert pickle.loads(pickle.dumps(d)) is d
    assert copy.copy(d) is d
    assert copy.deepcopy(d) is d


def test_dtype_cannot_be_constructed():
    with pytest.raises(Exception):
        ptcore.dtype()


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes_match_torch(name):
    d, t = pt(name), th(name)
    assert d.is_floating_point == t.is_floating_point
    assert d.is_complex == t.is_complex
    assert d.is_signed == t.is_signed
    assert d.itemsize == t.itemsize


@pytest.mark.parametrize("name,size", [
    ("bool", 1), ("uint8", 1), ("int8", 1), ("int16", 2), ("int32", 4), ("int64", 8),
    ("float16", 2), ("bfloat16", 2), ("float32", 4), ("float64", 8), ("complex64", 8),
    ("complex128", 16)])
def test_itemsize_and_tensor_element_size(name, size):
    assert pt(name).itemsize == size
    t = ptcore.zeros(3, dtype=pt(name))
    assert t.element_size() == size
    assert t.itemsize == size
    assert t.nbytes == 3 * size


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_to_real_matches_torch(name):
    try:
        expected = name_of(th(name).to_real())
    except RuntimeError:
        with pytest.raises(RuntimeError):
            pt(name).to_real()
        return
    assert name_of(pt(name).to_real()) == expected


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_to_complex_matches_torch(name):
    try:
        expected = name_of(th(name).to_complex())
    except RuntimeError:
        with pytest.raises(RuntimeError):
            pt(name).to_complex()
        return
    assert name_of(pt(name).to_complex()) == expected


def test_to_real_to_complex_values():
    assert ptcore.complex64.to_real() is ptcore.float32
    assert ptcore.complex128.to_real() is ptcore.float64
    assert ptcore.float32.to_complex() is ptcore.complex64
    assert ptcore.float64.to_complex() is ptcore.complex128
    assert ptcore.float64.to_real() is ptcore.float64
    assert ptcore.complex64.to_complex() is ptcore.complex64


@pytest.mark.parametrize("name", NAMES)
def test_tensor_dtype_predicates(name):
    t = ptcore.zeros(2, dtype=pt(name))
    assert t.dtype is pt(name)
    assert t.is_floating_point() == pt(name).is_floating_point
    assert t.is_complex() == pt(name).is_complex
    assert t.is_signed() == pt(name).is_signed
    assert ptcore.is_floating_point(t) == pt(name).is_floating_point
    assert ptcore.is_complex(t) == pt(name).is_complex
    assert ptcore.is_tensor(t)
    assert not ptcore.is_tensor(np.zeros(2))


# ---------------------------------------------------------------------------
# finfo / iinfo
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("name", FLOAT_NAMES + ["complex64", "complex128"])
def test_finfo_matches_torch(name):
    f, g = ptcore.finfo(pt(name)), torch.finfo(th(name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(f, attr) == getattr(g, attr), attr
    assert f.dtype == g.dtype


@needs_torch
def test_finfo_default_is_default_dtype(restore_default_dtype):
    assert ptcore.finfo().eps == torch.finfo().eps == np.finfo(np.float32).eps
    ptcore.set_default_dtype(ptcore.float64)
    assert ptcore.finfo().eps == np.finfo(np.float64).eps


def test_finfo_concrete_values():
    assert ptcore.finfo(ptcore.float16).max == 65504.0
    assert ptcore.finfo(ptcore.bfloat16).eps == 2.0 ** -7
    assert ptcore.finfo(ptcore.float32).eps == 2.0 ** -23
    assert ptcore.finfo(ptcore.float64).tiny == 2.0 ** -1022
    assert ptcore.finfo(ptcore.complex64).bits == 32


@pytest.mark.parametrize("name", ["bool"] + INT_NAMES)
def test_finfo_rejects_non_float(name):
    with pytest.raises(TypeError):
        ptcore.finfo(pt(name))


@needs_torch
@pytest.mark.parametrize("name", INT_NAMES)
def test_iinfo_matches_torch(name):
    i, j = ptcore.iinfo(pt(name)), torch.iinfo(th(name))
    assert (i.bits, i.min, i.max) == (j.bits, j.min, j.max)
    assert i.dtype == j.dtype


def test_iinfo_concrete_values():
    assert (ptcore.iinfo(ptcore.uint8).min, ptcore.iinfo(ptcore.uint8).max) == (0, 255)
    assert ptcore.iinfo(ptcore.int64).max == 2 ** 63 - 1
    assert ptcore.iinfo(ptcore.int64).min == -2 ** 63
    assert ptcore.iinfo(ptcore.int16).bits == 16


@needs_torch
@pytest.mark.parametrize("name", FLOAT_NAMES + ["complex64", "complex128", "bool"])
def test_iinfo_rejects_what_torch_rejects(name):
    with pytest.raises(TypeError):
        torch.iinfo(th(name))
    with pytest.raises(TypeError):
        ptcore.iinfo(pt(name))


# ---------------------------------------------------------------------------
# promote_types / can_cast
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_matches_torch(a, b):
    assert name_of(ptcore.promote_types(pt(a), pt(b))) == name_of(torch.promote_types(th(a), th(b)))


def test_promote_types_known_values():
    assert ptcore.promote_types(ptcore.uint8, ptcore.int8) is ptcore.int16
    assert ptcore.promote_types(ptcore.float16, ptcore.bfloat16) is ptcore.float32
    assert ptcore.promote_types(ptcore.complex64, ptcore.float64) is ptcore.complex128
    assert ptcore.promote_types(ptcore.int64, ptcore.float16) is ptcore.float16
    assert ptcore.promote_types(ptcore.bool, ptcore.bool) is ptcore.bool
    # symmetric
    for a, b in itertools.product(NAMES, NAMES):
        assert ptcore.promote_types(pt(a), pt(b)) is ptcore.promote_types(pt(b), pt(a))


@needs_torch
@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_can_cast_matches_torch(a, b):
    assert ptcore.can_cast(pt(a), pt(b)) == torch.can_cast(th(a), th(b))


# ---------------------------------------------------------------------------
# result_type
# ---------------------------------------------------------------------------

SCALARS = [True, 2, 2.5, 1 + 2j]


def _operands(lib, name, kind):
    """A tensor operand: kind 'dim' (shape (2,)) or 'zero' (0-d)."""
    shape = (2,) if kind == "dim" else ()
    return lib.zeros(shape, dtype=getattr(lib, name))


@needs_torch
@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
@pytest.mark.parametrize("kinds", [("dim", "zero"), ("zero", "dim"), ("zero", "zero")])
def test_result_type_tensor_tensor_matches_torch(a, b, kinds):
    got = ptcore.result_type(_operands(ptcore, a, kinds[0]), _operands(ptcore, b, kinds[1]))
    exp = torch.result_type(_operands(torch, a, kinds[0]), _operands(torch, b, kinds[1]))
    assert name_of(got) == name_of(exp)


@needs_torch
@pytest.mark.parametrize("a", NAMES)
@pytest.mark.parametrize("s", SCALARS, ids=repr)
@pytest.mark.parametrize("kind", ["dim", "zero"])
def test_result_type_tensor_scalar_matches_torch(a, s, kind):
    got = ptcore.result_type(_operands(ptcore, a, kind), s)
    exp = torch.result_type(_operands(torch, a, kind), s)
    assert name_of(got) == name_of(exp)
    got = ptcore.result_type(s, _operands(ptcore, a, kind))
    exp = torch.result_type(s, _operands(torch, a, kind))
    assert name_of(got) == name_of(exp)


@needs_torch
@pytest.mark.parametrize("s1,s2", list(itertools.product(SCALARS, SCALARS)), ids=repr)
def test_result_type_scalar_scalar_matches_torch(s1, s2):
    assert name_of(ptcore.result_type(s1, s2)) == name_of(torch.result_type(s1, s2))


def test_result_type_weak_scalars_known_values():
    i8 = ptcore.zeros(3, dtype=ptcore.int8)
    f16 = ptcore.zeros(3, dtype=ptcore.float16)
    assert ptcore.result_type(i8, 1000) is ptcore.int8           # int scalar is weak
    assert ptcore.result_type(i8, 1.5) is ptcore.float32         # category lift -> default
    assert ptcore.result_type(f16, 1.5) is ptcore.float16
    assert ptcore.result_type(ptcore.zeros(3, dtype=ptcore.float32), 1j) is ptcore.complex64
    # 0-d tensors do not beat dimensioned ones of the same category
    assert ptcore.result_type(i8, ptcore.tensor(5)) is ptcore.int8
    assert ptcore.result_type(i8, ptcore.tensor(5.0, dtype=ptcore.float64)) is ptcore.float64
    assert ptcore.result_type(ptcore.tensor(1, dtype=ptcore.int8), ptcore.tensor(1)) is ptcore.int64


def test_result_type_rejects_non_numbers():
    with pytest.raises(TypeError):
        ptcore.result_type(ptcore.zeros(2), "a")


# ---------------------------------------------------------------------------
# default dtype
# ---------------------------------------------------------------------------

def test_default_dtype_is_float32():
    assert ptcore.get_default_dtype() is ptcore.float32


@needs_torch
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_set_default_dtype_effects_match_torch(name, restore_default_dtype):
    ptcore.set_default_dtype(pt(name))
    torch.set_default_dtype(th(name))
    assert ptcore.get_default_dtype() is pt(name)
    pairs = [
        (ptcore.tensor([1.5]), torch.tensor([1.5])),
        (ptcore.tensor(2.5), torch.tensor(2.5)),
        (ptcore.zeros(2), torch.zeros(2)),
        (ptcore.ones(2, 2), torch.ones(2, 2)),
        (ptcore.empty(3), torch.empty(3)),
        (ptcore.full((2,), 1.5), torch.full((2,), 1.5)),
        (ptcore.arange(0.0, 2.0, 0.5), torch.arange(0.0, 2.0, 0.5)),
        (ptcore.linspace(0, 1, 3), torch.linspace(0, 1, 3)),
        (ptcore.rand(2), torch.rand(2)),
        (ptcore.randn(2), torch.randn(2)),
        (ptcore.eye(2), torch.eye(2)),
    ]
    for p, t in pairs:
        assert name_of(p.dtype) == name_of(t.dtype)
    # int data is unaffected
    assert ptcore.tensor([1, 2]).dtype is ptcore.int64
    assert ptcore.arange(3).dtype is ptcore.int64
    # result_type with a Python float on an int tensor uses the default dtype
    got = ptcore.result_type(ptcore.zeros(2, dtype=ptcore.int32), 1.0)
    assert name_of(got) == name_of(torch.result_type(torch.zeros(2, dtype=torch.int32), 1.0))


@needs_torch
def test_default_complex_follows_default_float(restore_default_dtype):
    ptcore.set_default_dtype(ptcore.float64)
    torch.set_default_dtype(torch.float64)
    assert ptcore.tensor([1j]).dtype is ptcore.complex128
    assert name_of(torch.tensor([1j]).dtype) == "complex128"
    assert ptcore.result_type(ptcore.zeros(2, dtype=ptcore.int64), 1j) is ptcore.complex128
    ptcore.set_default_dtype(ptcore.float32)
    assert ptcore.tensor([1j]).dtype is ptcore.complex64


@pytest.mark.parametrize("name", ["bool", "uint8", "int32", "int64", "complex64", "complex128"])
def test_set_default_dtype_rejects_non_float(name, restore_default_dtype):
    with pytest.raises(TypeError):
        ptcore.set_default_dtype(pt(name))
    assert ptcore.get_default_dtype() is ptcore.float32
    if torch is not None:
        with pytest.raises(TypeError):
            torch.set_default_dtype(th(name))


def test_dtype_arguments_accept_python_types():
    assert ptcore.zeros(2, dtype=float).dtype is ptcore.float64
    assert ptcore.zeros(2, dtype=int).dtype is ptcore.int64
    assert ptcore.zeros(2, dtype=bool).dtype is ptcore.bool
    assert ptcore.zeros(2, dtype=complex).dtype is ptcore.complex128
    if torch is not None:
        assert torch.zeros(2, dtype=float).dtype is torch.float64
        assert torch.zeros(2, dtype=int).dtype is torch.int64
        assert torch.zeros(2, dtype=bool).dtype is torch.bool


def test_invalid_dtype_argument_raises_type_error():
    with pytest.raises(TypeError):
        ptcore.zeros(2, dtype="not a dtype")
    with pytest.raises(TypeError):
        ptcore.zeros(2, dtype=3)
