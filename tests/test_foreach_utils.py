"""torch.utils._foreach_utils (imported by clip_grad and optimizer code copied
from torch) against torch's."""
import pytest

import ptcore
import ptcore.utils._foreach_utils as fu

torch = pytest.importorskip("torch")
import torch.utils._foreach_utils as tfu  # noqa: E402


def test_supported_devices_as_torch():
    assert fu._get_foreach_kernels_supported_devices() == tfu._get_foreach_kernels_supported_devices()
    assert fu._get_fused_kernels_supported_devices() == tfu._get_fused_kernels_supported_devices()
    for dev in ("cpu", "cuda", "meta", "mps"):
        assert fu._device_has_foreach_support(ptcore.device(dev)) == \
            tfu._device_has_foreach_support(torch.device(dev)), dev


def test_grouping_and_foreach_support_as_torch():
    def lists(lib):
        a = [lib.ones(2), lib.ones(3, dtype=lib.float64), lib.zeros(1), lib.ones(2, dtype=lib.float16)]
        b = [lib.full((2,), 2.0), None, lib.zeros(1), lib.ones(2, dtype=lib.float16)]
        return [a, b]
    for with_indices in (False, True):
        def keyed(groups):          # (torch's C++ map orders its groups its own way)
            return sorted(((k[0].type, str(k[1]).split(".")[-1]), v) for k, v in groups.items())
        got = keyed(fu._group_tensors_by_device_and_dtype(lists(ptcore), with_indices))
        want = keyed(tfu._group_tensors_by_device_and_dtype(lists(torch), with_indices))
        assert [k for k, _ in got] == [k for k, _ in want]
        for (_, (gl, gi)), (_, (wl, wi)) in zip(got, want):
            assert gi == wi
            assert [[None if t is None else t.tolist() for t in tl] for tl in gl] == \
                [[None if t is None else t.tolist() for t in tl] for tl in wl]
    src = lists(ptcore)
    g = fu._group_tensors_by_device_and_dtype(src)
    g[(ptcore.device("cpu"), ptcore.float32)][0][0][0].add_(1)       # the same tensors
    assert src[0][0].tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError):
        fu._group_tensors_by_device_and_dtype([[]])
    for args in (lambda L: [L.ones(2), L.ones(1), None], lambda L: [L.nn.Parameter(L.ones(2))],
                 lambda L: [L.ones(2)]):
        for dev in ("cpu", "meta"):
            assert fu._has_foreach_support(args(ptcore), ptcore.device(dev)) == \
                tfu._has_foreach_support(args(torch), torch.device(dev))
