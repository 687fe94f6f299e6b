"""vmap's steps looked up on ``torch._functorch.vmap`` at each call, as torch's vmap does:
tensordict replaces ``_process_batched_inputs``, ``_create_batched_inputs`` and
``_unwrap_batched`` there so that its TensorDicts (no tensors) pass through vmap whole
(TorchRL's value estimators vmap a value network over one).  The same replacement, for a
small container, on torch and on ptcore."""
import importlib

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


class Box:
    """A container vmap knows nothing of: it carries one tensor."""

    def __init__(self, t):
        self.t = t


def _install(m, monkeypatch):
    src = importlib.import_module(f"{m.__name__}._functorch.vmap")
    fc = importlib.import_module(f"{m.__name__}._C._functorch")
    orig_process, orig_create, orig_unwrap = (src._process_batched_inputs,
                                              src._create_batched_inputs, src._unwrap_batched)

    def process(in_dims, args, func):
        if isinstance(args[0], Box):
            return args[0].t.shape[in_dims], [in_dims], [args[0]], None
        return orig_process(in_dims, args, func)

    def create(flat_in_dims, flat_args, level, spec):
        if spec is None:
            return [Box(fc._add_batch_dim(flat_args[0].t, flat_in_dims[0], level))]
        return orig_create(flat_in_dims, flat_args, level, spec)

    def unwrap(out, out_dims, level, batch_size, func):
        if isinstance(out, Box):
            return Box(fc._remove_batch_dim(out.t, level, batch_size, out_dims))
        return orig_unwrap(out, out_dims, level, batch_size, func)
    monkeypatch.setattr(src, "_process_batched_inputs", process)
    monkeypatch.setattr(src, "_create_batched_inputs", create)
    monkeypatch.setattr(src, "_unwrap_batched", unwrap)


@pytest.mark.parametrize("lib", ["torch", "ptcore"])
def test_vmap_uses_the_replaced_steps(lib, monkeypatch):
    m = torch if lib == "torch" else ptcore
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    seen = []

    def f(box):
        seen.append(tuple(box.t.shape))            # one sample's shape inside vmap
        return Box(box.t.sum() * 2 + box.t)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        m.vmap(f)(Box(m.from_numpy(x)))
    _install(m, monkeypatch)
    out = m.vmap(f, in_dims=1)(Box(m.from_numpy(x)))
    assert isinstance(out, Box) and seen == [(3,)]
    np.testing.assert_allclose(out.t.numpy(), (2 * x.sum(0, keepdims=True) + x).T)
    # plain tensors still take the original steps, also in chunks
    y = m.vmap(lambda r: r * r.sum(), chunk_size=2)(m.from_numpy(x))
    np.testing.assert_allclose(y.numpy(), x * x.sum(1, keepdims=True))
