"""The layout, memory-format and quantization-scheme constants against torch 2.13:
one object per name (defined once: ``ptcore.sparse_coo`` is the sparse module's and
the core's), of the types ``ptcore.layout`` / ``memory_format`` / ``qscheme``, with
torch's reprs, pickled and copied as themselves, compared by identity, and not
constructible."""
import copy
import pickle

import pytest

import ptcore

torch = pytest.importorskip("torch")

LAYOUTS = ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "jagged")
FORMATS = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")
QSCHEMES = ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
            "per_channel_symmetric", "per_channel_affine_float_qparams")
ALL = [(n, "layout") for n in LAYOUTS] + [(n, "memory_format") for n in FORMATS] + \
    [(n, "qscheme") for n in QSCHEMES]


@pytest.mark.parametrize("name,kind", ALL)
def test_constant_type_and_repr(name, kind):
    p, t = getattr(ptcore, name), getattr(torch, name)
    assert type(t) is getattr(torch, kind)
    assert type(p) is getattr(ptcore, kind)
    assert type(p).__name__ == type(t).__name__ == kind
    assert isinstance(p, getattr(ptcore, kind))
    assert repr(p) == repr(t).replace("torch.", "ptcore.") == f"ptcore.{name}"
    assert str(p) == f"ptcore.{name}"
    assert p.__reduce__() == name
    for other_kind in ("layout", "memory_format", "qscheme"):
        if other_kind != kind:
            assert not isinstance(p, getattr(ptcore, other_kind))


@pytest.mark.parametrize("name,kind", ALL)
def test_constant_is_one_object(name, kind):
    p = getattr(ptcore, name)
    assert pickle.loads(pickle.dumps(p)) is p
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps([p, p], protocol=proto))[1] is p
    assert copy.copy(p) is p and copy.deepcopy(p) is p
    assert p == p and not (p != p) and hash(p) == hash(p)
    others = [getattr(ptcore, n) for n, _ in ALL if n != name]
    assert all(p != o for o in others)
    assert {p: 1}[getattr(ptcore, name)] == 1


def test_defined_once():
    from ptcore import _tensor as core
    from ptcore._quantized import _tensor as qt
    from ptcore.sparse import _tensor as sp
    from ptcore.nested import _tensor as nt
    for n in ("sparse_coo", "sparse_csr", "sparse_csc"):
        assert getattr(ptcore, n) is getattr(core, n) is getattr(sp, n) is \
            getattr(ptcore.sparse, n, getattr(sp, n))
    assert ptcore.jagged is core.jagged is nt.jagged is ptcore.nested.jagged
    assert ptcore.strided is core.strided
    for n in QSCHEMES:
        assert getattr(ptcore, n) is getattr(qt, n)
    assert ptcore.qscheme is qt.qscheme
    assert ptcore.layout is core.layout and ptcore.memory_format is core.memory_format


@pytest.mark.parametrize("kind", ["layout", "memory_format", "qscheme"])
def test_not_constructible(kind):
    for lib in (torch, ptcore):
        with pytest.raises(TypeError, match=f"cannot create '{lib.__name__}.{kind}' instances"):
            getattr(lib, kind)()


def test_tensor_layouts_and_factory_checks():
    assert ptcore.zeros(2).layout is ptcore.strided
    assert ptcore.zeros(2, 2).to_sparse().layout is ptcore.sparse_coo
    assert ptcore.eye(2).to_sparse_csr().layout is ptcore.sparse_csr
    q = ptcore.quantize_per_tensor(ptcore.ones(2), 0.1, 0, ptcore.quint8)
    assert q.qscheme() is ptcore.per_tensor_affine
    for f in ("zeros", "full"):
        args = ((2,), 1.0) if f == "full" else ((2,),)
        for lib in (torch, ptcore):
            with pytest.raises(TypeError, match=rf"{f}\(\): argument 'layout' must be "
                                                r"torch.layout, not (torch.)?memory_format"):
                getattr(lib, f)(*args, layout=lib.channels_last)
    # a sparse layout's checkpoint entry reads back in torch
    import io
    buf = io.BytesIO()
    ptcore.save({"l": ptcore.sparse_coo, "s": ptcore.strided, "q": ptcore.per_channel_affine},
                buf)
    buf.seek(0)
    got = torch.load(buf, weights_only=False)
    assert got == {"l": torch.sparse_coo, "s": torch.strided, "q": torch.per_channel_affine}
