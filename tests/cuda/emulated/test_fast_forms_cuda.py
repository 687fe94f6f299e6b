"""The CUDA kernels' fast forms, registered through ``ptcore._dispatch.device``
(issue 60 item 3: one way to a device): the common calls still take them
before the layers (the ``counted`` fixture sees no call reach the device
layer), with the CPU's values; every entry's cache (``OpDef.device_fast``)
is what its registered forms give; removing CUDA's registrations (its fast
forms, its row of the CPU driver's C table) sends the calls down the layers,
and registering them again brings the forms back.  The static rule (no one
else writes them): tests/dispatch/test_fast_forms.py."""
import numpy as np
import pytest

import ptcore
from ptcore._dispatch import device as device_layer
from ptcore._dispatch.table import OPS, lookup
from ptcore.cuda.ops import dense_fast as _dense_fast
from ptcore.cuda.ops import matmul_fast as _matmul_fast

F = ptcore.nn.functional


def _t(shape, dtype=ptcore.float32, seed=0):
    x = ptcore.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(dtype)
    return x, x.cuda()


def _same(got, ref):
    if isinstance(ref, tuple):
        for g, r in zip(got, ref):
            _same(g, r)
        return
    assert got.device.type == "cuda" and got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_allclose(got.cpu().double().numpy(), ref.double().numpy(), rtol=1e-6,
                               atol=1e-6)


def _calls():
    """(name, call(on_device)) for the common calls (tensors made at test time:
    the emulated device is on only inside a test of this folder)."""
    a, da = _t((4, 6), seed=1)
    b, db = _t((4, 6), seed=2)
    m, dm = _t((6, 3), seed=3)
    w, dw = _t((3, 6), seed=4)
    i = ptcore.arange(24, dtype=ptcore.int32).reshape(4, 6)
    j = (i * 7 + 3) % 11
    di, dj = i.cuda(), j.cuda()
    return [
        ("a + b", lambda D: da + db if D else a + b),
        ("add(a, b)", lambda D: ptcore.add(*((da, db) if D else (a, b)))),
        ("a * 2", lambda D: (da if D else a) * 2),
        ("a == b", lambda D: da == db if D else a == b),
        ("x.relu()", lambda D: (da if D else a).relu()),
        ("F.relu(x)", lambda D: F.relu(da if D else a)),
        ("F.relu(x, inplace=False)", lambda D: F.relu(da if D else a, inplace=False)),
        ("x.exp()", lambda D: (da if D else a).exp()),
        ("x.argmax()", lambda D: (da if D else a).argmax()),
        ("argmax(x, 1)", lambda D: ptcore.argmax(da if D else a, 1)),
        ("x.aminmax()", lambda D: tuple((da if D else a).aminmax())),
        ("x.sum()", lambda D: (da if D else a).sum()),
        ("mm", lambda D: ptcore.mm(*((da, dm) if D else (a, m)))),
        ("a @ m", lambda D: da @ dm if D else a @ m),
        ("F.linear", lambda D: F.linear(*((da, dw) if D else (a, w)))),
        ("clamp", lambda D: (da if D else a).clamp(-0.5, 0.5)),
        ("2 - a", lambda D: 2 - (da if D else a)),
        ("+a", lambda D: +(da if D else a)),
        ("i & j", lambda D: di & dj if D else i & j),
        ("i ^ j", lambda D: di ^ dj if D else i ^ j),
    ]


_NAMES = ["a + b", "add(a, b)", "a * 2", "a == b", "x.relu()", "F.relu(x)",
          "F.relu(x, inplace=False)", "x.exp()", "x.argmax()", "argmax(x, 1)", "x.aminmax()",
          "x.sum()", "mm", "a @ m", "F.linear", "clamp", "2 - a", "+a", "i & j", "i ^ j"]


@pytest.mark.parametrize("name", _NAMES)
def test_the_common_calls_take_the_fast_forms(counted, name):
    calls = dict(_calls())
    assert list(calls) == _NAMES
    call = calls[name]
    ref = call(False)
    got = call(True)
    assert counted == [], name
    _same(got, ref)


def test_in_place_forms_take_the_fast_forms(counted):
    a, da = _t((5,), seed=5)
    b, db = _t((5,), seed=6)
    i = ptcore.arange(5, dtype=ptcore.int32)
    j = i * 3 + 1
    di, dj = i.cuda(), j.cuda()
    da.add_(db)
    a.add_(b)
    da.relu_()
    a.relu_()
    di &= dj
    i &= j
    assert counted == []
    _same(da, a)
    _same(di, i)


def test_every_entrys_cache_is_its_registered_forms():
    ptcore.ones(1).cuda()
    assert "cuda" in device_layer._DRIVER_TYPES
    seen = 0
    for key, d in OPS.items():
        forms = device_layer.fast_forms(d)
        if not forms:
            assert d.device_fast is None, key
            continue
        seen += 1
        # CUDA is the one device type with fast forms here: its own, else the driver's
        want = forms.get("cuda", forms.get(device_layer.DRIVER))
        assert set(forms) <= {"cuda", device_layer.DRIVER}, key
        assert d.device_fast is want, key
    assert seen > 200


def test_removing_cudas_registrations_sends_the_calls_down_the_layers(counted):
    a, da = _t((4, 6), seed=7)
    m, dm = _t((6, 3), seed=8)
    add, argmax, mm = lookup("add", "ptcore"), lookup("argmax", "Tensor"), lookup("mm", "ptcore")
    driver_form = device_layer.fast_forms(add)[device_layer.DRIVER]
    assert add.device_fast is driver_form
    _dense_fast.uninstall()
    _matmul_fast.uninstall()
    try:
        # the driver's row is empty: the declared driver forms stay registered but
        # serve no device type; CUDA's own forms are gone
        assert "cuda" not in device_layer._DRIVER_TYPES
        assert device_layer.fast_forms(add) == {device_layer.DRIVER: driver_form}
        assert add.device_fast is None and argmax.device_fast is None and mm.device_fast is None
        assert "cuda" not in device_layer.fast_forms(lookup("linear", "nn.functional"))
        _same(ptcore.add(da, da), ptcore.add(a, a))
        _same(da.argmax(), a.argmax())
        _same(ptcore.mm(da, dm), ptcore.mm(a, m))
        assert counted == ["add", "argmax", "mm"]
    finally:
        _dense_fast.install()
        _matmul_fast.install()
    counted.clear()
    assert add.device_fast is driver_form and argmax.device_fast is not None
    assert mm.device_fast is device_layer.fast_forms(mm)["cuda"]
    _same(ptcore.add(da, da), ptcore.add(a, a))
    _same(da.argmax(), a.argmax())
    _same(ptcore.mm(da, dm), ptcore.mm(a, m))
    assert counted == []


def test_a_form_registered_for_cuda_is_tried_first_and_removed_cleanly(counted):
    _, dx = _t((3,), seed=9)
    cumsum = lookup("cumsum", "ptcore")
    assert cumsum.device_fast is None
    taken = []

    def form(args, kwargs):
        taken.append(args[0])
        return None if kwargs else "fast"
    device_layer.register_fast_form(cumsum, "cuda", form)
    try:
        assert cumsum.device_fast is form
        assert ptcore.cumsum(dx, 0) == "fast" and counted == []
        r = ptcore.cumsum(dx, dim=0)            # declined: the layers run the kernel
        assert r.device.type == "cuda" and counted == ["cumsum"]
        assert len(taken) == 2
    finally:
        device_layer.register_fast_form(cumsum, "cuda", None)
    assert cumsum.device_fast is None
    np.testing.assert_allclose(ptcore.cumsum(dx, 0).cpu().numpy(), np.cumsum(dx.cpu().numpy()),
                               rtol=1e-6)


def test_a_cuda_form_of_relu_reaches_f_relu(counted):
    # F.relu follows ptcore.relu's forms: CUDA's own for relu replaces the driver's
    # there too, and goes when it is removed
    _, dx = _t((3,), seed=10)
    relu, f_relu = lookup("relu", "ptcore"), lookup("relu", "nn.functional")
    before = f_relu.device_fast
    assert before is not None

    def form(args, kwargs):
        return "cuda relu" if not kwargs and len(args) == 1 else None
    device_layer.register_fast_form(relu, "cuda", form)
    try:
        assert F.relu(dx, inplace=False) == "cuda relu" and F.relu(dx) == "cuda relu"
        assert counted == []
    finally:
        device_layer.register_fast_form(relu, "cuda", None)
    assert set(device_layer.fast_forms(f_relu)) == {device_layer.DRIVER}
    assert F.relu(dx).device.type == "cuda" and counted == []
