"""einops' layers scripted with ptcore.jit.script (issue 64 item 3): a layer reads
a dict of user-class objects (TransformRecipe), which TorchScript compiles as a
script class.  einops runs against ptcore in a child interpreter in which
``torch`` is ptcore (tests/jit/torch_as_ptcore.py); its scripted layers'
outputs, also after ptcore.jit.save/load and a train/eval switch, are compared
with torch's scripted layers on the same inputs and weights."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

einops = pytest.importorskip("einops")
torch = pytest.importorskip("torch")
from einops.layers.torch import EinMix, Rearrange, Reduce  # noqa: E402

LAYERS = {
    "rearrange_flatten": ("Rearrange", ("b c h w -> b (c h w)",), {}),
    "rearrange_permute": ("Rearrange", ("b c h w -> b h w c",), {}),
    "rearrange_split": ("Rearrange", ("b c (h h2) w -> b (c h2) h w",), {"h2": 2}),
    "reduce_max_pool": ("Reduce", ("b c (h h2) (w w2) -> b c h w", "max"), {"h2": 2, "w2": 2}),
    "reduce_mean": ("Reduce", ("b c h w -> b c", "mean"), {}),
    "reduce_prod": ("Reduce", ("b c h w -> b h", "prod"), {}),
    "reduce_add_axis": ("Reduce", ("b c h w -> b c h w 1", "sum"), {}),
    "einmix": ("EinMix", ("b c h w -> b h w c2",), {"weight_shape": "c c2", "c": 3,
                                                    "c2": 5, "bias_shape": "c2"}),
    "einmix_grouped": ("EinMix", ("b c h w -> b (h w) c2",),
                       {"weight_shape": "c c2", "c": 3, "c2": 4}),
}

_CHILD = textwrap.dedent('''
    import io, json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import torch_as_ptcore          # noqa: F401  (torch is ptcore from here on)
    import torch
    from einops.layers.torch import EinMix, Rearrange, Reduce
    spec = json.loads(sys.argv[2])
    data = np.load(sys.argv[3])
    x = torch.from_numpy(data["x"])
    out = {}
    for name, (cls, args, kw) in spec.items():
        layer = {"Rearrange": Rearrange, "Reduce": Reduce, "EinMix": EinMix}[cls](*args, **kw)
        if cls == "EinMix":
            layer.load_state_dict({k: torch.from_numpy(data[name + "." + k])
                                   for k in layer.state_dict()})
        sm = torch.jit.script(layer)
        out[name + ".eager"] = layer(x).detach().numpy()
        out[name + ".scripted"] = sm(x).detach().numpy()
        buf = io.BytesIO()
        torch.jit.save(sm, buf)
        buf.seek(0)
        loaded = torch.jit.load(buf)
        out[name + ".loaded"] = loaded(x).detach().numpy()
        sm.eval()                   # recompiled for the eval mode
        out[name + ".eval"] = sm(x).detach().numpy()
    np.savez(sys.argv[4], **out)
''')


def _torch_layer(cls, args, kw):
    return {"Rearrange": Rearrange, "Reduce": Reduce, "EinMix": EinMix}[cls](*args, **kw)


def test_scripted_einops_layers_match_torch(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    inputs = {"x": x}
    want = {}
    torch.manual_seed(0)
    for name, (cls, args, kw) in LAYERS.items():
        layer = _torch_layer(cls, args, kw)
        for k, v in layer.state_dict().items():
            inputs[f"{name}.{k}"] = v.numpy()
        with torch.no_grad():
            want[name] = torch.jit.script(layer)(torch.from_numpy(x)).numpy()
    np.savez(tmp_path / "in.npz", **inputs)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(Path(__file__).parent), json.dumps(LAYERS),
         str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = np.load(tmp_path / "out.npz")
    for name in LAYERS:
        for how in ("eager", "scripted", "loaded", "eval"):
            np.testing.assert_allclose(got[f"{name}.{how}"], want[name], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} ({how})")


def test_torch_scripts_the_same_layers():
    # the oracle's side: torch compiles TransformRecipe as a script class (its
    # archive holds the class's TorchScript code)
    import io
    import zipfile
    sm = torch.jit.script(Reduce("b c (h h2) w -> b c h w", "max", h2=2))
    buf = io.BytesIO()
    torch.jit.save(sm, buf)
    code = b"".join(zipfile.ZipFile(buf).read(n) for n in zipfile.ZipFile(buf).namelist()
                    if n.endswith("einops/einops.py"))
    assert b"class TransformRecipe" in code


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_torch_archives_of_einops_layers_load_in_ptcore(name):
    # torch.jit.save writes TransformRecipe's TorchScript code and the recipes as
    # class objects: ptcore reads them as script objects and runs the code
    import io
    import ptcore
    cls, args, kw = LAYERS[name]
    torch.manual_seed(0)
    sm = torch.jit.script(_torch_layer(cls, args, kw))
    buf = io.BytesIO()
    torch.jit.save(sm, buf)
    pm = ptcore.jit.load(io.BytesIO(buf.getvalue()))
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 6)).astype(np.float32)
    with torch.no_grad():
        want = sm(torch.from_numpy(x)).numpy()
    with ptcore.no_grad():
        got = pm(ptcore.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    rec = next(iter(pm._multirecipe.values())) if hasattr(pm, "_multirecipe") else None
    if rec is not None:
        assert rec._type() == "einops.einops.TransformRecipe"
