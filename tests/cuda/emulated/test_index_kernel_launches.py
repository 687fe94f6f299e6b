"""The index kernels count negative indices from the end themselves: gather,
take, scatter, index_put and one-tensor advanced indexing launch no
elementwise wrap kernels (lt/add/where) and no error-flag fill, and give the
CPU's values for negative and positive indices alike."""
import numpy as np
import pytest

import ptcore

_WRAP = ("ptc_ternary_where", "ptc_scalar_lt", "ptc_scalar_add", "ptc_binary_add")


def _cpu(t):
    return t.cpu().numpy()


def _no_wrap(names):
    bad = [n for n in names if n.startswith(_WRAP) or n.startswith("ptc_fill_i32")]
    assert not bad, names


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = ptcore.from_numpy(rng.standard_normal((5, 7)).astype(np.float32))
    return x, x.cuda(), rng


def test_take_negative_indices(data, launches):
    x, xc, rng = data
    idx = ptcore.from_numpy(rng.integers(-35, 35, (4, 6)))
    launches.clear()
    got = xc.take(idx.cuda())
    _no_wrap(launches)
    assert sum(n.startswith("ptc_index_gather") for n in launches) == 1
    np.testing.assert_array_equal(_cpu(got), x.take(idx).numpy())
    with pytest.raises(IndexError):
        xc.take(ptcore.tensor([35]).cuda())
    with pytest.raises(IndexError):
        xc.take(ptcore.tensor([-36]).cuda())


def test_gather_scatter_values_and_launches(data, launches):
    x, xc, rng = data
    idx = ptcore.from_numpy(rng.integers(0, 7, (5, 3)))
    launches.clear()
    got = xc.gather(1, idx.cuda())
    _no_wrap(launches)
    np.testing.assert_array_equal(_cpu(got), x.gather(1, idx).numpy())
    src = ptcore.from_numpy(rng.standard_normal((5, 3)).astype(np.float32))
    launches.clear()
    yc = ptcore.zeros(5, 7).cuda().scatter_add_(1, idx.cuda(), src.cuda())
    _no_wrap(launches)
    np.testing.assert_allclose(_cpu(yc), ptcore.zeros(5, 7).scatter_add_(1, idx, src).numpy(), rtol=1e-6)
    for fn in (lambda t, i: t.gather(1, i), lambda t, i: t.clone().scatter_(1, i, 1.0)):
        bad = idx.clone()
        bad[0, 0] = -1
        with pytest.raises(RuntimeError):
            fn(x, bad)
        with pytest.raises(RuntimeError):
            fn(xc, bad.cuda())


def test_advanced_index_one_tensor_negative(data, launches):
    x, xc, rng = data
    idx = ptcore.from_numpy(rng.integers(-7, 7, (3, 4)))
    for get in (lambda t, i: t[:, i], lambda t, i: t[i % 5 - 5], lambda t, i: t[1:4, i.t()]):
        launches.clear()
        got = get(xc, idx.cuda())
        _no_wrap(launches)
        np.testing.assert_array_equal(_cpu(got), get(x, idx).numpy())
    # index_put with a negative index, plain and accumulating (repeated indices)
    rows = ptcore.tensor([-1, 0, -5, -1])
    v = ptcore.arange(28.).reshape(4, 7)
    for acc in (False, True):
        want = x.clone().index_put_((rows,), v[:, :] if acc else v[:, :] * 0 + 3.0, accumulate=acc)
        launches.clear()
        got = xc.clone().index_put_((rows.cuda(),), (v if acc else v * 0 + 3.0).cuda(), accumulate=acc)
        _no_wrap(launches)
        np.testing.assert_allclose(_cpu(got), want.numpy(), rtol=1e-6)
    # two index tensors (summed offsets) keep their wrap
    r, c = ptcore.tensor([-1, 2]), ptcore.tensor([3, -7])
    np.testing.assert_array_equal(_cpu(xc[r.cuda(), c.cuda()]), x[r, c].numpy())


def test_launcher_counts_launches(data):
    from ptcore.cuda.runtime import state as _runtime
    x, xc, rng = data
    drv = _runtime.lazy_init("test")
    if drv.launcher is None:
        pytest.skip("no C launcher")
    n0 = drv.launcher.launches
    xc + xc                                  # the dense fast path (C launch)
    ptcore.cuda.synchronize()
    n1 = drv.launcher.launches
    xc.gather(1, ptcore.zeros(5, 2, dtype=ptcore.int64).cuda())     # the Python launch path
    n2 = drv.launcher.launches
    assert n1 - n0 == 1 and n2 - n1 >= 2
