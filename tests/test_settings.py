"""Global settings and utilities (ptcore.use_deterministic_algorithms, set_default_device,
set_float32_matmul_precision, frombuffer ...) against PyTorch."""
import array
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _same_error(fp, ft):
    with pytest.raises(Exception) as ep:
        fp()
    with pytest.raises(Exception) as et:
        ft()
    assert type(ep.value) is type(et.value), (ep.value, et.value)
    assert str(ep.value).replace("ptcore", "torch") == str(et.value), (ep.value, et.value)


@needs_torch
def test_deterministic_round_trip_and_errors():
    try:
        for mode, warn_only in ((True, False), (True, True), (False, True), (False, False)):
            ptcore.use_deterministic_algorithms(mode, warn_only=warn_only)
            torch.use_deterministic_algorithms(mode, warn_only=warn_only)
            assert ptcore.are_deterministic_algorithms_enabled() == \
                torch.are_deterministic_algorithms_enabled()
            assert ptcore.is_deterministic_algorithms_warn_only_enabled() == \
                torch.is_deterministic_algorithms_warn_only_enabled()
            assert ptcore.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
        for m in (0, 1, 2, "default", "warn", "error", True):
            ptcore.set_deterministic_debug_mode(m)
            torch.set_deterministic_debug_mode(m)
            assert ptcore.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert ptcore.are_deterministic_algorithms_enabled() == \
                torch.are_deterministic_algorithms_enabled()
        for bad in (3, "x", 1.0):
            _same_error(lambda: ptcore.set_deterministic_debug_mode(bad),
                        lambda: torch.set_deterministic_debug_mode(bad))
        for bad in (1, "x"):
            _same_error(lambda: ptcore.use_deterministic_algorithms(bad),
                        lambda: torch.use_deterministic_algorithms(bad))
        _same_error(lambda: ptcore.use_deterministic_algorithms(True, warn_only=1),
                    lambda: torch.use_deterministic_algorithms(True, warn_only=1))
    finally:
        ptcore.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)


def _unpool_cases(lib):
    F = lib.nn.functional
    o, i = F.max_pool2d(lib.arange(16.).reshape(1, 1, 4, 4), 2, return_indices=True)
    o3, i3 = F.max_pool3d(lib.arange(64.).reshape(1, 1, 4, 4, 4), 2, return_indices=True)
    o1, i1 = F.max_pool1d(lib.arange(8.).reshape(1, 1, 8), 2, return_indices=True)
    return [lambda: F.max_unpool1d(o1, i1, 2), lambda: F.max_unpool2d(o, i, 2),
            lambda: lib.nn.MaxUnpool2d(2)(o, i), lambda: F.max_unpool3d(o3, i3, 2)]


def _alert_cases(lib):
    idx = lib.tensor([0, 0, 2])
    return [lambda: lib.zeros(4).put_(idx, lib.ones(3)), lambda: lib.zeros(4).put(idx, lib.ones(3)),
            lambda: lib.put(lib.zeros(4), idx, lib.ones(3))] + _unpool_cases(lib)


@needs_torch
@pytest.mark.parametrize("case", range(7))
def test_deterministic_alerts_as_torch(case):
    # torch refuses put_ without accumulation and max_unpool (any device) in deterministic
    # mode, or warns under warn_only=True; the result is then as in the default mode
    try:
        want_default = _alert_cases(torch)[case]()
        got_default = _alert_cases(ptcore)[case]()
        for lib in (torch, ptcore):
            lib.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError) as et:
            _alert_cases(torch)[case]()
        with pytest.raises(RuntimeError) as ep:
            _alert_cases(ptcore)[case]()
        head = str(et.value).split(" application.")[0]
        assert str(ep.value).startswith(head), (ep.value, et.value)
        for lib in (torch, ptcore):
            lib.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="does not have a deterministic implementation"):
            got = _alert_cases(ptcore)[case]()
        np.testing.assert_array_equal(got.numpy(), got_default.numpy())
        np.testing.assert_array_equal(got.numpy(), want_default.numpy())
    finally:
        ptcore.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)


@needs_torch
def test_deterministic_alerts_spare_accumulation():
    # put_ with accumulate=True is deterministic on the CPU in torch: no alert
    try:
        for lib in (torch, ptcore):
            lib.use_deterministic_algorithms(True)
        idx = [0, 0, 2]
        got = ptcore.zeros(4).put_(ptcore.tensor(idx), ptcore.ones(3), accumulate=True)
        want = torch.zeros(4).put_(torch.tensor(idx), torch.ones(3), accumulate=True)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    finally:
        ptcore.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)


@needs_torch
def test_matmul_precision():
    try:
        assert ptcore.get_float32_matmul_precision() == "highest"
        for p in ("high", "medium", "highest"):
            ptcore.set_float32_matmul_precision(p)
            assert ptcore.get_float32_matmul_precision() == p
        ptcore.set_float32_matmul_precision("medium")
        with pytest.warns(UserWarning, match="low is not one of 'highest', 'high', or 'medium'"):
            ptcore.set_float32_matmul_precision("low")
        assert ptcore.get_float32_matmul_precision() == "medium"
        _same_error(lambda: ptcore.set_float32_matmul_precision(3),
                    lambda: torch.set_float32_matmul_precision(3))
    finally:
        ptcore.set_float32_matmul_precision("highest")


def test_default_device():
    try:
        assert ptcore.get_default_device() == ptcore.device("cpu")
        ptcore.set_default_device("meta")
        assert ptcore.get_default_device() == ptcore.device("meta")
        ptcore.set_default_device(ptcore.device("cpu"))
        assert ptcore.get_default_device() == ptcore.device("cpu")
        ptcore.set_default_device(None)
        assert ptcore.get_default_device() == ptcore.device("cpu")
        with pytest.raises(RuntimeError):
            ptcore.set_default_device("foo")
    finally:
        ptcore.set_default_device(None)


@needs_torch
def test_warn_always_and_anomaly():
    try:
        assert ptcore.is_warn_always_enabled() is False
        ptcore.set_warn_always(True)
        assert ptcore.is_warn_always_enabled() is True
        _same_error(lambda: ptcore.set_warn_always(1), lambda: torch.set_warn_always(1))
        ptcore.set_anomaly_enabled(True)
        assert ptcore.is_anomaly_enabled() and ptcore.is_anomaly_check_nan_enabled()
        assert ptcore.autograd.anomaly_mode.is_anomaly_enabled()
        ptcore.set_anomaly_enabled(True, False)
        assert ptcore.is_anomaly_enabled() and not ptcore.is_anomaly_check_nan_enabled()
        ptcore.set_anomaly_enabled(False)
        assert not ptcore.is_anomaly_enabled() and ptcore.is_anomaly_check_nan_enabled()
        with ptcore.autograd.set_detect_anomaly(True):
            assert ptcore.is_anomaly_enabled()
        assert not ptcore.is_anomaly_enabled()
        _same_error(lambda: ptcore.set_anomaly_enabled(1), lambda: torch.set_anomaly_enabled(1))
    finally:
        ptcore.set_warn_always(False)
        ptcore.set_anomaly_enabled(False)


def test_interop_threads_set_once(tmp_path):
    code = """
import ptcore
assert ptcore.get_num_interop_threads() >= 1
for bad, exc in ((0, RuntimeError), (-1, RuntimeError), ('a', RuntimeError)):
    try:
        ptcore.set_num_interop_threads(bad)
    except exc:
        pass
    else:
        raise AssertionError(bad)
ptcore.set_num_interop_threads(3)
assert ptcore.get_num_interop_threads() == 3
try:
    ptcore.set_num_interop_threads(2)
except RuntimeError as e:
    assert "cannot set number of interop threads" in str(e)
else:
    raise AssertionError('second call must fail')
"""
    # run outside the source tree: from the repository root the child would
    # import the uncompiled source package instead of the installed one
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


@needs_torch
def test_flush_denormal():
    _same_error(lambda: ptcore.set_flush_denormal(1), lambda: torch.set_flush_denormal(1))
    try:
        ok = ptcore.set_flush_denormal(True)
        assert ok == torch.set_flush_denormal(True)
        a, b = ptcore.tensor([1e-38]), ptcore.tensor([0.01])
        if ok:
            assert (a * b).item() == 0.0
            assert (torch.tensor([1e-38]) * torch.tensor([0.01])).item() == 0.0
    finally:
        assert ptcore.set_flush_denormal(False) == torch.set_flush_denormal(False)
    assert (ptcore.tensor([1e-38]) * ptcore.tensor([0.01])).item() != 0.0


@needs_torch
def test_typename_get_device_abi():
    assert ptcore.typename(ptcore.zeros(2)) == "ptcore.FloatTensor"
    assert ptcore.typename(ptcore.zeros(2, dtype=ptcore.int64)) == "ptcore.LongTensor"
    assert ptcore.typename(3) == torch.typename(3) == "int"
    assert ptcore.typename(int) == "int"
    assert ptcore.typename(ptcore.Generator) == "ptcore.Generator"
    assert ptcore.typename(np.float64(1)) == torch.typename(np.float64(1))
    assert ptcore.get_device(ptcore.zeros(2)) == torch.get_device(torch.zeros(2)) == -1
    _same_error(lambda: ptcore.get_device(3), lambda: torch.get_device(3))
    assert ptcore.compiled_with_cxx11_abi() is True


@needs_torch
def test_set_default_tensor_type():
    from ptcore._warn import _WARNED_ONCE
    _WARNED_ONCE.discard("set_default_tensor_type")     # another test in this process may have warned
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            ptcore.set_default_tensor_type("torch.DoubleTensor")
        assert ptcore.get_default_dtype() == ptcore.float64
        assert ptcore.tensor([1.5]).dtype == ptcore.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ptcore.set_default_tensor_type("ptcore.HalfTensor")
            assert ptcore.get_default_dtype() == ptcore.float16
            ptcore.set_default_tensor_type(torch.DoubleTensor)
            assert ptcore.get_default_dtype() == ptcore.float64
            _same_error(lambda: ptcore.set_default_tensor_type("torch.IntTensor"),
                        lambda: torch.set_default_tensor_type("torch.IntTensor"))
            _same_error(lambda: ptcore.set_default_tensor_type(ptcore.float64),
                        lambda: torch.set_default_tensor_type(torch.float64))
            _same_error(lambda: ptcore.set_default_tensor_type("torch.Foo"),
                        lambda: torch.set_default_tensor_type("torch.Foo"))
            ptcore.set_default_tensor_type("torch.FloatTensor")
        assert ptcore.get_default_dtype() == ptcore.float32
    finally:
        ptcore.set_default_dtype(ptcore.float32)
        torch.set_default_dtype(torch.float32)


@needs_torch
def test_set_default_tensor_type_cuda_without_cuda():
    # torch without CUDA: TypeError, the default dtype unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not torch.cuda.is_available():
            _same_error(lambda: ptcore.set_default_tensor_type("torch.cuda.FloatTensor"),
                        lambda: torch.set_default_tensor_type("torch.cuda.FloatTensor"))
        if not ptcore.cuda.is_available():
            with pytest.raises(TypeError, match="cuda.DoubleTensor not available"):
                ptcore.set_default_tensor_type(ptcore.cuda.DoubleTensor)
    assert ptcore.get_default_dtype() == ptcore.float32
    assert ptcore.zeros(1).device.type == "cpu"


@needs_torch
@pytest.mark.parametrize("dt", ["uint8", "int16", "int32", "int64", "float32", "float64",
                                "bfloat16", "float16", "complex64", "bool"])
def test_frombuffer_values(dt):
    b = bytearray(range(1, 33))
    pd, td = getattr(ptcore, dt), getattr(torch, dt)
    for count, offset in ((-1, 0), (2, 8), (1, 16)):
        p = ptcore.frombuffer(b, dtype=pd, count=count, offset=offset)
        t = torch.frombuffer(b, dtype=td, count=count, offset=offset)
        assert p.dtype == pd and tuple(p.shape) == tuple(t.shape)
        np.testing.assert_array_equal(p.view(ptcore.uint8).numpy(), t.view(torch.uint8).numpy())


@needs_torch
def test_frombuffer_shares_memory_and_grad():
    b = bytearray(16)
    p = ptcore.frombuffer(b, dtype=ptcore.int32)
    b[4] = 7
    assert p[1].item() == 7
    p[2] = 5
    assert b[8] == 5
    a = array.array("d", [1.0, 2.0, 3.0])
    q = ptcore.frombuffer(a, dtype=ptcore.float64, requires_grad=True)
    assert q.requires_grad and q.tolist() == [1.0, 2.0, 3.0]
    with pytest.warns(UserWarning, match="not writable"):
        r = ptcore.frombuffer(bytes(8), dtype=ptcore.uint8)
    assert r.tolist() == [0] * 8


@needs_torch
def test_frombuffer_errors():
    b = bytearray(range(16))
    for kw in (dict(count=5), dict(offset=2), dict(offset=16), dict(offset=-1), dict(count=0),
               dict(count=1, offset=13), dict(count=2.0)):
        _same_error(lambda: ptcore.frombuffer(b, dtype=ptcore.int32, **kw),
                    lambda: torch.frombuffer(b, dtype=torch.int32, **kw))
    _same_error(lambda: ptcore.frombuffer(bytearray(), dtype=ptcore.int32),
                lambda: torch.frombuffer(bytearray(), dtype=torch.int32))
    _same_error(lambda: ptcore.frombuffer([1, 2], dtype=ptcore.int32),
                lambda: torch.frombuffer([1, 2], dtype=torch.int32))
    _same_error(lambda: ptcore.frombuffer(memoryview(b)[::2], dtype=ptcore.uint8),
                lambda: torch.frombuffer(memoryview(b)[::2], dtype=torch.uint8))
    with pytest.raises(TypeError):
        ptcore.frombuffer(b)
