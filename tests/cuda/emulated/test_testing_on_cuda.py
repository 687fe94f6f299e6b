"""``ptcore.testing`` with CUDA tensors (on the emulated device): the device
check and its message as torch's ("cuda:0 != cpu"), values of different
devices compared on the CPU when ``check_device=False``, and ``make_tensor``
on the device."""
import pytest

import ptcore
from device_target import need_devices
from ptcore.testing import assert_close, make_tensor


def test_device_mismatch_message():
    a, b = ptcore.tensor([1.0, 2.0], device="cuda"), ptcore.tensor([1.0, 2.0])
    with pytest.raises(AssertionError) as info:
        assert_close(a, b)
    assert str(info.value) == "The values for attribute 'device' do not match: cuda:0 != cpu."
    assert_close(a, b, check_device=False)


def test_values_compared_on_the_cpu():
    a = ptcore.tensor([1.0, 2.5], device="cuda")
    b = ptcore.tensor([1.0, 2.0], dtype=ptcore.float64)
    with pytest.raises(AssertionError) as info:
        assert_close(a, b, check_device=False, check_dtype=False)
    assert str(info.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.25 at index (1,) (up to 1.3e-06 allowed)")


def test_same_device_compares_there():
    a = ptcore.tensor([[1, 2], [3, 4]], device="cuda")
    assert_close(a, a.clone())
    with pytest.raises(AssertionError, match=r"Greatest absolute difference: 3 at index \(1, 0\)"):
        assert_close(a, ptcore.tensor([[1, 2], [0, 4]], device="cuda"))


def test_two_devices():
    need_devices(2)
    a, b = ptcore.ones(3, device="cuda:0"), ptcore.ones(3, device="cuda:1")
    with pytest.raises(AssertionError, match="'device' do not match: cuda:0 != cuda:1"):
        assert_close(a, b)
    assert_close(a, b, check_device=False)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.int64, ptcore.bool, ptcore.complex64])
def test_make_tensor_on_the_device(dtype):
    t = make_tensor(4, 6, dtype=dtype, device="cuda", noncontiguous=True, exclude_zero=True)
    assert t.device.type == "cuda" and t.dtype is dtype and not t.is_contiguous()
    assert not bool((t == 0).any())
    if dtype is ptcore.int64:
        assert int(t.min()) >= -9 and int(t.max()) < 10
