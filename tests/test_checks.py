"""torch._check and its family, torch._assert and torch._weight_norm against torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

_CHECKS = [("_check", RuntimeError), ("_check_index", IndexError), ("_check_value", ValueError),
           ("_check_type", TypeError), ("_check_not_implemented", NotImplementedError)]


@pytest.mark.parametrize("name,err", _CHECKS)
def test_checks_raise_their_types_with_lazy_messages(name, err):
    for lib in (torch, ptcore):
        fn = getattr(lib, name)
        assert fn(True) is None
        assert fn(True, lambda: 1 / 0) is None               # the message is evaluated on failure only
        with pytest.raises(err, match="^shape was 3$"):
            fn(False, lambda: "shape was 3")
        with pytest.raises(err, match="Expected cond to be True"):
            fn(False)
        with pytest.raises(TypeError, match="cond must be a bool"):
            fn(1)
        with pytest.raises(TypeError, match="_check_tensor_all"):
            fn(lib.tensor(True))
        with pytest.raises(TypeError, match="message must be a callable"):
            fn(False, "not callable")


def test_check_with_tensor_all_is_size_and_assert():
    for lib in (torch, ptcore):
        with pytest.raises(KeyError):
            lib._check_with(KeyError, False, lambda: "k")
        with pytest.raises(AssertionError):
            lib._check_with(UserWarning, False, None)
        lib._check_tensor_all(lib.tensor([True, True]))
        with pytest.raises(RuntimeError, match="bad"):
            lib._check_tensor_all(lib.tensor([True, False]), lambda: "bad")
        with pytest.raises(TypeError, match="dtype"):
            lib._check_tensor_all(lib.tensor([1, 1]))
        with pytest.raises(ValueError):
            lib._check_tensor_all_with(ValueError, lib.tensor([False]))
        with pytest.warns(FutureWarning):
            lib._check_is_size(3)
        with pytest.warns(FutureWarning), pytest.raises(RuntimeError):
            lib._check_is_size(4, max=3)
        lib._assert(True, "fine")
        lib._assert(lib.tensor(True), "fine")
        with pytest.raises(AssertionError, match="the patch size"):
            lib._assert(False, "the patch size")
        with pytest.raises(AssertionError):
            lib._assert(lib.tensor(0), "zero")


def test_weight_norm_function():
    v = torch.randn(4, 3, 2, dtype=torch.float64)
    g = torch.rand(4, 1, 1, dtype=torch.float64) + 0.5
    for dim in (0, 2, -1):
        gg = g if dim == 0 else (torch.rand(1, 1, 2, dtype=torch.float64) if dim == 2
                                 else torch.tensor(1.5, dtype=torch.float64))
        want = torch._weight_norm(v, gg, dim)
        got = ptcore._weight_norm(ptcore.from_numpy(v.numpy()), ptcore.from_numpy(gg.numpy()), dim)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
