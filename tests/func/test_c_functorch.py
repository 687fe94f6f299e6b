"""``ptcore._C._functorch`` and ``ptcore._functorch.vmap`` (torch's names for functorch's
batched-tensor primitives, which tensordict imports) against torch's: a tensor batched inside
``vmap`` or by ``_add_batch_dim``, ``_remove_batch_dim`` to each output dimension, the levels,
``get_unwrapped``, and the errors."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ptcore.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("in_dim,out_dim", [(0, 0), (1, 0), (1, 1), (-1, 2), (0, -1)])
def test_batch_dims_inside_vmap(in_dim, out_dim):
    res = []
    for lib, x in zip((ptcore, torch), _both((3, 4, 5))):
        F = lib._C._functorch
        seen = {}

        def f(y):
            level = F.current_level()
            seen["batched"] = [F.is_batchedtensor(y), F.maybe_get_level(y) == level,
                               F.is_batchedtensor(y * 2)]
            seen["removed"] = F._remove_batch_dim(y * 2, level, x.shape[in_dim], out_dim)
            seen["expanded"] = F._remove_batch_dim(lib.ones(2), level, x.shape[in_dim], 0)
            n = x.shape[in_dim]
            extra = F._add_batch_dim(lib.arange(2. * n).reshape(2, n), 1, level)
            seen["added"] = [list(extra.shape), F.is_batchedtensor(extra)]
            return y.sum(0) + extra.sum()
        out = lib.vmap(f, in_dims=in_dim)(x)
        res.append((out, seen))
    (po, ps), (to, ts) = res
    np.testing.assert_allclose(po.numpy(), to.numpy(), rtol=1e-6)
    assert ps["batched"] == ts["batched"] == [True, True, True]
    for key in ("removed", "expanded"):
        assert not ptcore._C._functorch.is_batchedtensor(ps[key])
        assert list(ps[key].shape) == list(ts[key].shape)
        np.testing.assert_allclose(ps[key].numpy(), ts[key].numpy(), rtol=1e-6)
    assert ps["added"] == ts["added"]


def test_plain_tensors_and_errors():
    for lib in (ptcore, torch):
        F = lib._C._functorch
        x = lib.ones(2, 3)
        assert (F.is_batchedtensor(x), F.maybe_get_level(x), F.maybe_get_bdim(x)) == \
            (False, -1, -1)
        with pytest.raises(RuntimeError):
            F.get_unwrapped(x)
        b = F._add_batch_dim(x, 1, 1)       # (a level no vmap holds: wrapped all the same)
        assert F.is_batchedtensor(b) and F.maybe_get_level(b) == 1 and list(b.shape) == [2]
        back = F._remove_batch_dim(b, 1, 3, 0)
        assert list(back.shape) == [3, 2] and not F.is_batchedtensor(back)
        assert list(F.get_unwrapped(b).shape) in ([3, 2], [2, 3])   # (bdim first here)
        with pytest.raises(TypeError):
            F.is_batchedtensor([1.0])


def test_functorch_vmap_helpers():
    from ptcore._functorch import vmap as pv
    from torch._functorch import vmap as tv
    for mod, lib in ((pv, ptcore), (tv, torch)):
        assert mod._get_name(len) == "len"
        x = lib.ones(2)
        assert mod._maybe_remove_batch_dim("f", x, 1, 3, None) is x
        with pytest.raises(ValueError, match="must only return Tensors"):
            mod._maybe_remove_batch_dim("f", 1.0, 1, 3, 0)
        # (an unbatched output is expanded; torch's expand fails for out_dim > 0 there)
        assert list(mod._maybe_remove_batch_dim("f", x, 1, 3, 0).shape) == [3, 2]
        spec = mod.tree_flatten([1, (2, 3)])[1]
        assert mod._broadcast_to_and_flatten([0, None], spec) == [0, None, None]
        assert mod._broadcast_to_and_flatten([0, 1, 2], spec) is None


def test_make_functional_as_functorch():
    """functorch's ``make_functional``/``make_functional_with_buffers`` and
    ``combine_state_for_ensemble`` (``import functorch`` under the launcher; tensordict
    subclasses the functional modules): values and gradients through ``grad`` and ``vmap``
    match torch's."""
    functorch = pytest.importorskip("functorch")
    from ptcore._functorch import package as pf
    outs = []
    for lib, ft in ((ptcore, pf), (torch, functorch)):
        x = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))

        def make(seed):
            m = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.BatchNorm1d(5), lib.nn.Tanh(),
                                  lib.nn.Linear(5, 2))
            rng = np.random.default_rng(seed)
            with lib.no_grad():
                for p in m.parameters():
                    p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
            return m.eval()
        model = make(0)
        fmodel, params, buffers = ft.make_functional_with_buffers(model)
        assert fmodel.param_names == tuple(n for n, _ in model.named_parameters())
        out = fmodel(params, buffers, x)
        grads = ft.grad(lambda p: fmodel(p, buffers, x).square().sum())(params)
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.fill_(0.5)
            lin.bias.fill_(-1.0)
        f2, p2 = ft.make_functional(lin, disable_autograd_tracking=True)
        plain = [f2(p2, x), [p.requires_grad for p in p2]]
        with pytest.raises(RuntimeError, match="has buffers"):
            ft.make_functional(model)
        fm, ps, bs = ft.combine_state_for_ensemble([make(1), make(2), make(3)])
        ens = ft.vmap(fm, (0, 0, None))(ps, bs, x)
        outs.append([out, grads, plain, ens, [list(p.shape) for p in ps]])
    (po, pg, pp, pe, pshapes), (to, tg, tp, te, tshapes) = outs
    np.testing.assert_allclose(po.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(pg, tg):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pp[0].detach().numpy(), tp[0].detach().numpy(), rtol=1e-6)
    assert pp[1] == tp[1] == [False, False]
    np.testing.assert_allclose(pe.detach().numpy(), te.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert pshapes == tshapes
