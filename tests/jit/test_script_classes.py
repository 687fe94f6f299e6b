"""User classes reached from a scripted module's attributes are compiled as
TorchScript's script classes (issue 64 item 3): the scripted module holds
script objects (copies: typed fields), scripted code reads and sets their fields
and calls their methods, and such modules save and load with jit.save/jit.load.
Compared with torch.jit.script of the same classes."""
import io
from typing import Dict, List

import numpy as np
import pytest

import ptcore
from ptcore.jit._script_class import ScriptObject

torch = pytest.importorskip("torch")


class Recipe:
    def __init__(self, perm: List[int], scale: float, table: Dict[int, int]):
        self.perm = perm
        self.scale = scale
        self.table = table
        self.calls = 0

    def apply(self, x):
        return x.permute(self.perm) * self.scale

    def bump(self) -> int:
        self.calls += 1
        return self.calls


class _Body:
    def forward(self, x):
        r = self.recipes[x.dim()]       # a run-time key: the object is a graph value
        n = r.bump()
        y = r.apply(x) + float(r.table[x.dim() - 2]) + float(n)
        return y + self.fixed.scale     # a compile-time object: its field


def _recipes():
    return {2: Recipe([1, 0], 2.0, {0: 1}), 3: Recipe([2, 0, 1], 0.5, {1: 7})}


class TorchM(_Body, torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.recipes = _recipes()
        self.fixed = Recipe([0], 3.0, {})


class PtM(_Body, ptcore.nn.Module):
    def __init__(self):
        super().__init__()
        self.recipes = _recipes()
        self.fixed = Recipe([0], 3.0, {})


def _run(sm, lib, xs):
    return [sm(lib.from_numpy(x)).numpy() for x in xs]


def test_script_class_fields_and_methods_match_torch():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 3)).astype(np.float32),
          rng.standard_normal((2, 3, 4)).astype(np.float32),
          rng.standard_normal((2, 3)).astype(np.float32)]
    tsm = torch.jit.script(TorchM())
    psm = ptcore.jit.script(PtM())
    want = _run(tsm, torch, xs)
    got = _run(psm, ptcore, xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    # the scripted module holds copies, which its graphs mutate (torch returns them
    # to Python as instances of the class, ptcore as ScriptObjects with the fields)
    assert isinstance(psm.recipes[2], ScriptObject)
    assert psm.recipes[2].perm == [1, 0] and psm.recipes[3].table == {1: 7}
    assert psm.recipes[2].calls == tsm.recipes[2].calls == 2
    assert psm.recipes[3].calls == tsm.recipes[3].calls == 1


def test_script_objects_save_and_load():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    psm = ptcore.jit.script(PtM())
    tsm = torch.jit.script(TorchM())
    psm(ptcore.from_numpy(x))
    tsm(torch.from_numpy(x))
    pbuf, tbuf = io.BytesIO(), io.BytesIO()
    ptcore.jit.save(psm, pbuf)
    torch.jit.save(tsm, tbuf)
    pbuf.seek(0)
    tbuf.seek(0)
    loaded, tl = ptcore.jit.load(pbuf), torch.jit.load(tbuf)
    # the objects' state is saved (bump() counted one call) and the loaded graphs
    # go on mutating it: two more calls, as torch's loaded module
    for _ in range(2):
        np.testing.assert_allclose(loaded(ptcore.from_numpy(x)).numpy(),
                                   tl(torch.from_numpy(x)).numpy(), rtol=1e-6)
    rec = loaded.recipes[2]
    # a loaded script object is data: its class's name and fields, no code
    assert isinstance(rec, ScriptObject) and rec._cls is None
    assert rec._type().endswith("Recipe") and rec.table == {0: 1}
    # the loaded module's attribute is the object its graphs mutate, as torch's
    tl(torch.from_numpy(x))
    loaded(ptcore.from_numpy(x))
    assert rec.calls == tl.recipes[2].calls == 4


def test_unscriptable_field_is_a_clear_error():
    class Holder:
        def __init__(self):
            self.fn = print          # a builtin function: no script class field

    class M(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.h = {0: Holder()}

        def forward(self, x):
            return x + len(self.h[x.dim() - 1].__class__.__name__)
    with pytest.raises(ptcore.jit.ScriptError, match="Holder|fn"):
        ptcore.jit.script(M())(ptcore.ones(1))
