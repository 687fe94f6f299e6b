"""The loops of front-ends per device (ptcore._dispatch.device): a front-end
reaches its element loop for a tensor's device through ``cpu_kernel`` (a
device without the loop is refused) and chooses its fast form through
``loop_for`` (a device without it takes the general path)."""
import pytest

import ptcore
from ptcore._dispatch import device as D


@pytest.fixture
def fake_loops():
    added = []

    def register(op, fn):
        D.register_loop(op, "fakedev", fn)
        added.append(op)
        return fn
    yield register
    for op in added:
        D._LOOPS.pop((op, "fakedev"), None)


def cpu_fn(*args):
    return "cpu"


def test_loop_for_cpu_takes_the_cpu_loop():
    assert D.loop_for("test loop", "cpu", cpu_fn) is cpu_fn
    assert D.loop_for("test loop", ptcore.device("cpu"), cpu_fn) is cpu_fn
    assert D.loop_for("test loop", ptcore.zeros(1).device, cpu_fn) is cpu_fn


def test_loop_for_a_device_without_the_loop_is_none(fake_loops):
    assert D.loop_for("test loop", "fakedev", cpu_fn) is None
    assert not D.has_loop("test loop", "fakedev")
    with pytest.raises(NotImplementedError, match="test loop.*FAKEDEV"):
        D.cpu_kernel("test loop", "fakedev", cpu_fn)


def test_loop_for_a_device_with_the_loop_is_its_loop(fake_loops):
    def dev_fn(*args):
        return "dev"
    fake_loops("test loop", dev_fn)
    assert D.loop_for("test loop", "fakedev", cpu_fn) is dev_fn
    assert D.cpu_kernel("test loop", "fakedev", cpu_fn) is dev_fn
    assert D.has_loop("test loop", "fakedev")
    assert D.loop_for("test loop", "cpu", cpu_fn) is cpu_fn


def test_cpu_loops_are_the_front_ends_own():
    with pytest.raises(ValueError, match="CPU loops"):
        D.register_loop("test loop", "cpu", cpu_fn)
