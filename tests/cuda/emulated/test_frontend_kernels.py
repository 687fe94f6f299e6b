"""The ops declared ``device="frontend"`` (ptcore/_ops/declarations) run their
own front-ends on CUDA tensors: the CUDA registration installs each one's
front-end as its kernel (``ptcore._dispatch.device.register_frontends``),
before the modules' own kernels, which replace it only for the forms they
cover.  Where a device has no kernel for one, the device layer refuses it
as it refuses a ``"kernel"`` op (it does not let it through to its body)."""
import numpy as np
import pytest

import ptcore
from ptcore._dispatch import device as device_layer
from ptcore._dispatch.declarations import DECLARED, DEVICE
from ptcore._dispatch.table import OPS, lookup
from ptcore.cuda.runtime import state as _runtime

# the forms of a "frontend" op whose CUDA kernel is a module's own
# (launch's cuBLAS addmm, the fused hardtanh of ptcore.cuda.ops.nn)
REPLACED = {("ptcore", "addmm"), ("Tensor", "addmm"), ("nn.functional", "hardtanh")}


def _frontend(d):
    return d.raw if d._body_factory is not None else d.body


def _frontend_forms():
    _runtime.lazy_init("test")
    return {key: d for key, d in OPS.items() if d.decl is not None and d.decl.device == "frontend"}


def test_declared_frontends_are_the_cuda_kernels():
    assert "frontend" in DEVICE
    forms = _frontend_forms()
    # every family the CUDA front-ends come from: indexing/shape, reductions,
    # random, the matmul family and search, nn.functional
    families = {d.decl.family for d in forms.values()}
    assert {"shape", "reduction", "random", "sorting", "linalg", "nn.functional",
            "pointwise"} <= families
    assert len(forms) > 300
    for key, d in sorted(forms.items()):
        k = d.kernels.get("cuda")
        if key in REPLACED:
            assert k is not None and k is not _frontend(d), key
        else:
            assert k is _frontend(d), (key, k)
    for key in REPLACED:
        assert key in forms, key


def test_aliases_take_the_fact_of_their_op():
    for name, target in (("clip", "clamp"), ("ger", "outer"), ("vector_norm", "_vector_norm")):
        d = DECLARED[("ptcore", name)]
        assert d.alias == target
        assert d.device == DECLARED[("ptcore", target)].device == "frontend", name
        assert lookup(name, "ptcore").kernels.get("cuda") is lookup(name, "ptcore").raw, name


def test_frontend_ops_are_refused_without_a_kernel():
    """A "frontend" op is not let through to its body on a device with no
    kernel for it (its loops would not run there)."""
    forms = _frontend_forms()
    # (the core methods, factories and the composites modules' functions pass
    # through the layer whatever their declaration says)
    plain = [d for d in forms.values() if d.kind != "core" and "factory" not in d.tags
             and not (getattr(d.raw, "__module__", "") or "").endswith("_composite")]
    assert len(plain) > 300
    assert not any(device_layer.passes_through(d) for d in plain)
    d = lookup("sort", "ptcore")
    saved, bodies = d.kernels.pop("cuda"), dict(d.device_bodies)
    d.device_bodies.clear()
    try:
        with pytest.raises(NotImplementedError, match="sort"):
            ptcore.sort(ptcore.ones(3).cuda())
    finally:
        d.kernels["cuda"] = saved
        d.device_bodies.update(bodies)


@pytest.mark.parametrize("name", ["sort", "clamp", "cumsum", "index_select", "outer", "kthvalue"])
def test_a_frontend_runs_its_loops_on_the_device(name):
    x = ptcore.tensor([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]])
    call = {
        "sort": lambda t: ptcore.sort(t, dim=1)[0],
        "clamp": lambda t: ptcore.clamp(t, -0.5, 2.5),
        "cumsum": lambda t: ptcore.cumsum(t, 1),
        "index_select": lambda t: ptcore.index_select(t, 1, ptcore.tensor([2, 0], device=t.device)),
        "outer": lambda t: ptcore.outer(t[0], t[1]),
        "kthvalue": lambda t: ptcore.kthvalue(t, 2, 1)[0],
    }[name]
    r = call(x.cuda())
    assert r.device.type == "cuda"
    np.testing.assert_allclose(r.cpu().numpy(), call(x).numpy())
