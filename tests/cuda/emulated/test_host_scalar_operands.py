"""A 0-d CPU tensor as an operand of a CUDA op is a host value, as in torch:
it reaches the kernel without a copy that waits for the stream (the sixth
H200 run found ``Tensor.addr`` 15x torch's time, two such waits per call),
and the result equals the CPU's."""
import numpy as np
import pytest

import ptcore
from ptcore.cuda.runtime import state as _runtime

_WAITS = ("memcpy_dtoh", "stream_synchronize", "device_synchronize", "event_synchronize")


@pytest.fixture
def waits(monkeypatch):
    """The host waits (device-to-host copies and synchronizations) while the test runs."""
    drv = _runtime.lazy_init("test")
    seen = []
    for name in _WAITS:
        orig = getattr(drv, name, None)
        if orig is not None:
            monkeypatch.setattr(drv, name, lambda *a, _o=orig, _n=name, **k: (seen.append(_n), _o(*a, **k))[1])
    return seen


CASES = [
    # (the CUDA operand's dtype, the 0-d CPU operand's value and dtype, op)
    ("float32", 2.5, "float32", "add"),
    ("float32", 3, "int64", "mul"),
    ("float16", 1.0009765625 + 2 ** -12, "float64", "mul"),    # rounds to float16 once, as the CPU
    ("int32", 7, "int64", "sub"),
    ("int32", 2 ** 40 + 3, "int64", "add"),                     # wraps as the CPU's cast
    ("float32", True, "bool", "mul"),
    ("uint8", 200, "int64", "add"),
    ("complex64", 1 + 2j, "complex128", "mul"),
    ("float64", -0.0, "float32", "div"),
]


@pytest.mark.parametrize("dt, value, sdt, op", CASES)
def test_a_0d_cpu_operand_needs_no_wait_and_matches_the_cpu(dt, value, sdt, op, waits):
    rng = np.random.default_rng(0)
    a = ptcore.from_numpy((rng.standard_normal((5, 4)) * 10).astype("float64")).to(getattr(ptcore, dt))
    s = ptcore.tensor(value, dtype=getattr(ptcore, sdt))
    want = getattr(ptcore, op)(a, s)
    ad = a.cuda()
    ptcore.cuda.synchronize()
    waits.clear()
    got = getattr(ptcore, op)(ad, s)
    got_r = getattr(ptcore, op)(s, ad)
    assert waits == [], waits
    assert got.device.type == "cuda" and got.dtype is want.dtype
    want_r = getattr(ptcore, op)(s, a)
    if dt == "float16":
        # torch's CUDA kernels take a CPU scalar in the computation type (float32) in
        # either position (its CPU kernels only in the second; first, it is rounded to
        # float16 with the other operand), so the reflected form is checked against that
        f = {"mul": np.multiply}[op]
        want_r = ptcore.from_numpy(f(np.float32(value), a.numpy().astype("float32")).astype("float16"))
        np.testing.assert_array_equal(want.numpy(), want_r.numpy())    # the CPU's second position
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    np.testing.assert_array_equal(got_r.cpu().numpy(), want_r.numpy())


@pytest.mark.parametrize("dt", ["float32", "float16", "int64"])
def test_addr_on_cuda_waits_for_nothing(dt, waits):
    rng = np.random.default_rng(1)
    mk = lambda *shape: ptcore.from_numpy((rng.standard_normal(shape) * 4).round()).to(getattr(ptcore, dt))
    x, v, w = mk(6, 5), mk(6), mk(5)
    want = x.addr(v, w, beta=2, alpha=3)
    xd, vd, wd = x.cuda(), v.cuda(), w.cuda()
    ptcore.cuda.synchronize()
    waits.clear()
    got = xd.addr(vd, wd, beta=2, alpha=3)
    xd.addr_(vd, wd, beta=2, alpha=3)
    assert waits == [], waits
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    np.testing.assert_array_equal(xd.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("sdt", ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "complex32"])
def test_a_0d_cpu_operand_of_a_dtype_without_cuda_kernels(sdt, waits):
    """Its value is filled in the op's dtype (its own has no fill kernel): where, clamp
    and mul give the CPU's values and dtypes, without a wait."""
    s = ptcore.tensor(2, dtype=getattr(ptcore, sdt))
    a = ptcore.tensor([-1.5, 0.25, 3.0, 7.0])
    ad = a.cuda()
    cases = [lambda x: ptcore.where(x > 0, s, x), lambda x: x * s]
    if not s.is_complex():
        cases.append(lambda x: ptcore.clamp(x, max=s))
    ptcore.cuda.synchronize()
    for f in cases:
        want = f(a)
        waits.clear()
        got = f(ad)
        assert waits == [], waits
        assert got.dtype is want.dtype
        assert got.cpu().tolist() == want.tolist()
