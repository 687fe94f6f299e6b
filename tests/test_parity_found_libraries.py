"""What geoopt, PyPose, pytorch-minimize and ptwt took in ptcore (tests/as_torch/
test_{geometry,numerics}_libraries.py and test_wavelets.py run them), checked here without
the libraries, against torch: scripted functions (a tensor's unary minus outside a fused
chain on the second call, ``functools.partial`` of an op in a closure, layouts as constants,
names ptcore lacks, ptcore's own Python functions), the block-sparse layouts' constants,
``torch._vmap_internals._vmap``, ``torch.autograd.functional``'s helpers,
``torch._functorch.eager_transforms``, and sparse COO construction, in-place addition and
``select``."""
import functools
import importlib

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")
LIBS = (torch, ptcore)


def _lorentz_like(L):
    # (geoopt's Lorentz inner product: the negated narrow is no pointwise chain)
    def inner(u, dim: int = -1):
        d = u.size(dim) - 1
        uv = u * u
        return L.cat((-uv.narrow(dim, 0, 1), uv.narrow(dim, 1, d)), dim=dim).sum(dim=dim)
    return L.jit.script(inner)


def test_scripted_unary_minus_on_the_specialised_second_call():
    x = np.random.default_rng(0).standard_normal((3, 4))
    outs = []
    for L in LIBS:
        f = _lorentz_like(L)
        t = L.from_numpy(x)
        with L.no_grad():
            outs.append([f(t).numpy() for _ in range(3)])
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)


def _partial_matrix_function(L, fn, **kwargs):
    func = functools.partial(fn, **kwargs)

    def impl(x):
        e, v = L.linalg.eigh(x, "U")
        return v @ L.diag_embed(func(e)) @ v.transpose(-1, -2)
    return L.jit.script(impl)


@pytest.mark.parametrize("name,kwargs", [("abs", {}), ("clamp", {"min": 0.5}),
                                         ("pow", {"exponent": 0.5})])
def test_scripted_partial_of_an_op(name, kwargs):
    a = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.3]])
    outs = [_partial_matrix_function(L, getattr(L, name), **kwargs)(L.from_numpy(a)).numpy()
            for L in LIBS]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10, atol=1e-12)


def test_layout_constants_in_scripted_functions():
    assert repr(ptcore.sparse_bsr) == "ptcore.sparse_bsr" and \
        ptcore.sparse_bsc is not ptcore.sparse_bsr
    assert isinstance(ptcore.sparse_bsr, ptcore.layout)
    for L in LIBS:
        def f(x):
            assert x.layout == L.strided or x.layout == L.sparse_bsr
            return x.layout == L.sparse_csr
        g = L.jit.script(f)
        assert g(L.ones(2)) is False and g(L.ones(2)) is False


def test_scripted_function_naming_what_ptcore_lacks_raises_when_called():
    def f(x, flag: bool):
        if flag:
            return ptcore.sparse_bsr_tensor(x, x, x)
        return x + 1
    g = ptcore.jit.script(f)            # compiles, as torch's
    assert g(ptcore.ones(2), False).tolist() == [2.0, 2.0]
    with pytest.raises(Exception, match="sparse_bsr_tensor"):
        g(ptcore.ones(2), True)


def test_scripted_call_of_a_ptcore_python_function():
    # (sparse_coo_tensor is Python in ptcore, a built-in op in TorchScript)
    outs = []
    for L in LIBS:
        def f(i, v):
            return L.sparse_coo_tensor(i, v * 2, (2, 2))
        g = L.jit.script(f)
        i, v = L.tensor([[0, 1], [1, 0]]), L.tensor([1.0, 2.0])
        outs.append([(g(i, v).layout == L.sparse_coo, g(i, v).to_dense().tolist())
                     for _ in range(2)])
    assert outs[1] == outs[0]


def test_vmap_internals_vmap():
    from ptcore._vmap_internals import _vmap
    import torch._vmap_internals as tv
    x = np.random.default_rng(1).standard_normal((4, 3))
    outs = []
    for L, vm in ((torch, tv._vmap), (ptcore, _vmap)):
        w = L.from_numpy(x[0]).requires_grad_()
        y = (w * w).sum()

        def vjp(ct):
            # (the second input is unused: a None gradient passed through)
            return L.autograd.grad([y], [w, L.ones(1, dtype=L.float64, requires_grad=True)],
                                   ct, retain_graph=True, allow_unused=True)
        g, none = vm(vjp, allow_none_pass_through=True)(L.from_numpy(x[:, 0].copy()))
        assert none is None
        outs.append((g.numpy(), vm(L.sin, 1)(L.from_numpy(x)).numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    with pytest.raises(ValueError, match="out_dims"):
        _vmap(ptcore.sin, 0, "x")(ptcore.ones(2))
    with pytest.warns(FutureWarning):
        importlib.import_module("ptcore._vmap_internals").vmap(ptcore.sin)


def test_autograd_functional_helpers():
    import torch.autograd.functional as tf
    import ptcore.autograd.functional as pf
    for L, F in ((torch, tf), (ptcore, pf)):
        a, b = L.zeros(2, dtype=L.float64), L.zeros(1, 3)
        chunks = F._construct_standard_basis_for((a, b), (2, 3))
        assert [c.dtype for c in chunks] == [L.float64, L.float32]
        assert [c.tolist() for c in chunks] == [
            [[1, 0], [0, 1], [0, 0], [0, 0], [0, 0]],
            [[0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]]
        assert F._as_tuple(a)[0] is a and F._as_tuple([a, b]) == (a, b)
        assert F._as_tuple(a, "inputs", "jac") == (False, (a,))
        with pytest.raises(TypeError, match="The inputs given to jac must be"):
            F._as_tuple((a, 1), "inputs", "jac")
        assert F._tuple_postprocess(((a,),), (False, False)) is a
        x = L.ones(2, requires_grad=True) * 2
        assert not F._grad_postprocess((x,), False)[0].requires_grad
        assert F._grad_postprocess(((x,),), True)[0][0] is x


def test_functorch_eager_transforms_module():
    import ptcore._functorch as fp
    assert fp.eager_transforms.jacrev is ptcore.func.jacrev
    t = ptcore.ones(2)
    assert fp.eager_transforms._wrap_tensor_for_grad(t, 1) is t
    assert fp.vmap._add_batch_dim is not None


def test_sparse_coo_indices_of_any_dtype_and_inplace_add_and_select():
    outs = []
    for L in LIBS:
        res = []
        for dt in (L.float32, L.float64, L.int32, L.uint8):
            i = L.tensor([[0.0, 1.0], [1.0, 0.0]]).to(dt)
            s = L.sparse_coo_tensor(i, L.tensor([1.0, 2.0]), (2, 2)).coalesce()
            res.append((str(s.indices().dtype).split(".")[-1], s.to_dense().tolist()))
        a = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([1.0, 2.0]), (2, 2))
        b = L.sparse_coo_tensor(L.tensor([[0], [0]]), L.tensor([5.0]), (2, 2))
        c = a.clone()
        c += b
        c -= a
        res.append((c.layout == L.sparse_coo, c.to_dense().tolist()))
        res.append(a.select(0, L.tensor(1)).to_dense().tolist())
        outs.append(res)
    assert outs[1] == outs[0]
