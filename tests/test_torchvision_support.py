"""The torch names torchvision imports and calls at import time, each against torch: dispatch
keys and the autocast-excluding guard, ``torch.ops.load_library`` (refusing libraries built
against libtorch), ``torch.library.register_fake`` for an op defined later, the
``symbolic_opset11`` helpers in an exported ONNX graph, TorchScript's overload declarations
and ``BroadcastingList`` annotations, the quantization stubs, ``is_compile_supported``.
(tests/as_torch/test_torchvision.py runs torchvision itself where it is installed.)"""
import ctypes.util
import os

import numpy as np
import pytest

import ptcore
from ptcore import library

torch = pytest.importorskip("torch")


def _keys(lib):
    K = lib._C.DispatchKey
    return lib._C.DispatchKeySet(K.AutocastCPU) | lib._C.DispatchKeySet(K.AutocastCUDA), K


def test_dispatch_key_sets_as_torch():
    for lib in (ptcore, torch):
        s, K = _keys(lib)
        assert repr(s) == "DispatchKeySet(AutocastCPU, AutocastCUDA)"
        assert s.has(K.AutocastCPU) and not s.has(K.CPU)
        assert (s - lib._C.DispatchKeySet(K.AutocastCPU)).has(K.AutocastCUDA)
        assert not (s - lib._C.DispatchKeySet(K.AutocastCPU)).has(K.AutocastCPU)
    with pytest.raises(TypeError):
        ptcore._C.DispatchKeySet("AutocastCPU")


def test_exclude_guard_stops_autocast_inside():
    a = np.ones((2, 3), dtype=np.float32)
    got = []
    for lib in (ptcore, torch):
        s, _ = _keys(lib)
        x = lib.from_numpy(a)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            with lib._C._ExcludeDispatchKeyGuard(s):
                inside = lib.mm(x, x.t()).dtype
            after = lib.mm(x, x.t()).dtype
        got.append((str(inside).split(".")[1], str(after).split(".")[1]))
    assert got[0] == got[1] == ("float32", "bfloat16")
    K = ptcore._C.DispatchKey
    with pytest.raises(NotImplementedError, match="AutogradCPU"):
        ptcore._C._ExcludeDispatchKeyGuard(ptcore._C.DispatchKeySet(K.AutogradCPU))


def test_load_library_refuses_libtorch_builds(tmp_path):
    fake = tmp_path / "_C.so"
    fake.write_bytes(b"\x7fELF" + b"\0" * 64 + b"libc10.so\0libtorch_cpu.so\0")
    with pytest.raises(OSError, match="libtorch"):
        ptcore.ops.load_library(str(fake))
    assert str(fake) not in ptcore.ops.loaded_libraries
    with pytest.raises(OSError):
        ptcore.ops.load_library(str(tmp_path / "missing.so"))
    libm = ctypes.util.find_library("m")
    if libm is None or not os.path.isabs(libm):
        for cand in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6", "/lib64/libm.so.6"):
            if os.path.exists(cand):
                libm = cand
                break
        else:
            pytest.skip("no libm path to load")
    ptcore.ops.load_library(libm)
    assert libm in ptcore.ops.loaded_libraries
    ptcore.ops.load_library(libm)            # (again: nothing more)


def test_register_fake_before_the_op_is_defined():
    seen = []

    @library.register_fake("ptc_tv_test::twice")
    def fake(x):
        seen.append(tuple(x.shape))
        return x.new_empty(x.shape)

    lib = library.Library("ptc_tv_test", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CPU")
        x = ptcore.arange(6.0).reshape(2, 3)
        assert ptcore.ops.ptc_tv_test.twice(x).tolist() == (x * 2).tolist()
        op = library._REGISTRY["ptc_tv_test::twice"]
        assert op._fake is fake
        library.opcheck(ptcore.ops.ptc_tv_test.twice.default, (x,),
                        test_utils=("test_schema",))
    finally:
        lib._destroy() if hasattr(lib, "_destroy") else None
    with pytest.raises(TypeError):
        library.register_fake("ptc_tv_test::other", 3)


def test_symbolic_opset11_helpers_in_an_exported_graph(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    from ptcore.onnx import symbolic_opset11 as opset11

    class M(ptcore.nn.Module):
        def forward(self, x):
            return ptcore.ops.ptc_tv_onnx.pick(x)

    lib = library.Library("ptc_tv_onnx", "DEF")
    lib.define("pick(Tensor x) -> Tensor")
    lib.impl("pick", lambda x: x[:, 1].clone(), "CPU")

    def pick_symbolic(g, x):
        col = opset11.select(g, x, 1, g.op("Constant", value_t=ptcore.tensor([1])))
        return opset11.squeeze(g, opset11.unsqueeze(g, opset11.squeeze(g, col, 1), 0), 0)

    x = ptcore.arange(12.0).reshape(3, 4)
    for opset in (11, 17):
        ptcore.onnx.register_custom_op_symbolic("ptc_tv_onnx::pick", pick_symbolic, opset)
        path = tmp_path / f"m{opset}.onnx"
        ptcore.onnx.export(M(), (x,), str(path), opset_version=opset)
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        out = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
        np.testing.assert_array_equal(out, x[:, 1].numpy())
        ptcore.onnx.unregister_custom_op_symbolic("ptc_tv_onnx::pick", opset)


def test_jit_overload_declarations_and_broadcasting_lists():
    from ptcore.jit.annotations import BroadcastingList2

    class M(ptcore.nn.Module):
        @ptcore.jit._overload_method
        def f(self, x: int) -> int:
            ...

        @ptcore.jit._overload_method  # noqa: F811
        def f(self, x: float) -> float:
            ...

        def f(self, x):  # noqa: F811
            return x * 2

    @ptcore.jit._overload
    def g(x: int) -> int:
        ...

    def g(x):  # noqa: F811
        return x + 1

    assert M().f(3) == 6 and g(1) == 2
    assert BroadcastingList2[int] is None is torch.jit.annotations.BroadcastingList2[int]
    assert ptcore.jit._script_if_tracing is ptcore.jit.script_if_tracing


def test_quantization_stubs_are_identities_before_convert():
    x = ptcore.randn(2, 3)
    for cls, tcls in ((ptcore.ao.quantization.QuantStub, torch.ao.quantization.QuantStub),
                      (ptcore.ao.quantization.DeQuantStub, torch.ao.quantization.DeQuantStub)):
        m, tm = cls(qconfig="q"), tcls(qconfig="q")
        assert m(x) is x and m.qconfig == tm.qconfig == "q"
        assert not hasattr(cls(), "qconfig") and not hasattr(tcls(), "qconfig")
        assert list(m.state_dict()) == list(tm.state_dict()) == []


def test_observer_and_fake_quantize_bases_as_torch():
    # the abstract bases (fvcore's checkpointer imports them to skip observer modules): not
    # instantiable themselves; a subclass gets torch's attributes, buffers and switches
    for L in (ptcore, torch):
        q = L.ao.quantization
        for base in (q.ObserverBase, q.FakeQuantizeBase):
            with pytest.raises(TypeError):
                base() if base is q.FakeQuantizeBase else base(L.float32)

    def run(L):
        q = L.ao.quantization

        class Obs(q.ObserverBase):
            def forward(self, x):
                return x

            def calculate_qparams(self):
                return 1.0, 0

        class FQ(q.FakeQuantizeBase):
            def forward(self, x):
                return x

            def calculate_qparams(self):
                return 1.0, 0
        obs = Obs.with_args(dtype=L.quint8 if hasattr(L, "quint8") else None)()
        fq = FQ()
        seen = [isinstance(obs, q.ObserverBase), isinstance(fq, q.FakeQuantizeBase),
                isinstance(fq, q.ObserverBase), obs.is_dynamic, sorted(fq.state_dict())]
        fq.disable_fake_quant()
        fq.disable_observer()
        fq.enable_observer()
        seen += [(b.dtype == L.uint8, b.tolist()) for b in (fq.fake_quant_enabled,
                                                              fq.observer_enabled)]
        return seen
    assert run(ptcore) == run(torch)


def test_compile_support_by_device_and_torch_home(monkeypatch):
    from ptcore._dynamo.utils import is_compile_supported
    assert is_compile_supported("cpu") and is_compile_supported(ptcore.device("cuda", 0))
    assert not is_compile_supported("meta")
    monkeypatch.setenv("TORCH_HOME", "/tmp/th")
    monkeypatch.delenv("PTCORE_HOME", raising=False)
    assert ptcore.hub._get_torch_home() == "/tmp/th"


def test_dispatch_key_set_refuses_what_is_no_key():
    s, K = _keys(ptcore)
    for bad in ("AutocastCPU", 20, None):
        for method in (s.has, s.add, s.remove):
            with pytest.raises(TypeError, match="DispatchKey"):
                method(bad)
    with pytest.raises(TypeError):
        s | 3
    assert s.add(K.CPU).has(K.CPU) and not s.remove(K.AutocastCPU).has(K.AutocastCPU)


def test_dynamo_warn_once_warns_each_message_once():
    import warnings
    from ptcore._dynamo.utils import warn_once
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        warn_once("ptcore test message A")
        warn_once("ptcore test message A")
        warn_once("ptcore test message B")
    assert [str(x.message) for x in w] == ["ptcore test message A", "ptcore test message B"]
