"""Run one program written against a ``torch``-like module under torch and under ptcore
from the same initial weights, and compare what it returns.

A program is ``prog(torch, init, **kw)``: it builds its models with the module it is
given and calls ``init(*modules)`` once they exist; under torch ``init`` records their
state dicts, under ptcore it loads them (through NumPy), so both runs start from the same
parameters and buffers.  Data comes from NumPy generators seeded inside the program.
"""
import contextlib
import re
import warnings

import numpy as np

import ptcore


def _state_arrays(module):
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def run_pair(prog, torch, **kw):
    """``(ptcore_result, torch_result)`` of ``prog`` run under both libraries."""
    states = []

    def record(*modules):
        states.extend(_state_arrays(m) for m in modules)

    loaded = iter(range(len(states) + 10 ** 6))

    def load(*modules):
        for m in modules:
            sd = states[next(loaded)]
            m.load_state_dict({k: ptcore.from_numpy(v.copy()) for k, v in sd.items()})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # torch runs first and its initial weights are copied across: seeded,
        # so a program's weights do not depend on which tests ran before it
        # (Adam turns the last-bit differences of gradients near zero into
        # whole steps for some weights, and so the results of some seeds)
        torch.manual_seed(0)
        ptcore.manual_seed(0)
        out_t = prog(torch, record, **kw)
        out_p = prog(ptcore, load, **kw)
    return out_p, out_t


_NUMBER = r"[-+]?\d+\.?\d*(?:e[-+]?\d+)?"


def assert_close(got, want, rtol=1e-4, atol=1e-5, path="out", scaled=False):
    """Nested lists/tuples/dicts of tensors, arrays, numbers and strings agree: tensors in
    shape, dtype and value, strings in their text with the numbers in them compared as
    numbers.  ``scaled``: a tensor's ``atol`` is relative to its largest magnitude (at
    least 1), for sums of many terms whose small elements come from cancellation and
    carry the rounding of the large ones, e.g. a weight gradient of magnitude 100 with
    an element near 0.5 that summation order moves by 6e-5."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), path
        for k in want:
            assert_close(got[k], want[k], rtol, atol, f"{path}[{k!r}]", scaled)
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (path, got, want)
        for i, (a, b) in enumerate(zip(got, want)):
            assert_close(a, b, rtol, atol, f"{path}[{i}]", scaled)
    elif isinstance(want, str):
        assert re.sub(_NUMBER, "#", got) == re.sub(_NUMBER, "#", want), (path, got, want)
        assert_close([float(v) for v in re.findall(_NUMBER, got)],
                     [float(v) for v in re.findall(_NUMBER, want)], rtol, atol, path, scaled)
    else:
        a = np.asarray(got.detach().numpy() if hasattr(got, "detach") else got)
        b = np.asarray(want.detach().numpy() if hasattr(want, "detach") else want)
        assert type(got).__name__ == type(want).__name__, (
            path, type(got), type(want))
        assert a.shape == b.shape and a.dtype == b.dtype, (path, a.shape, b.shape, a.dtype, b.dtype)
        if scaled and b.size and b.dtype.kind in "fc":
            atol = atol * max(1.0, float(np.nanmax(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=path)


@contextlib.contextmanager
def one_thread(torch):
    """Both libraries at one thread (torch's reduction order depends on its thread count)."""
    old = torch.get_num_threads(), ptcore.get_num_threads()
    torch.set_num_threads(1)
    ptcore.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old[0])
        ptcore.set_num_threads(old[1])


def text_of(o):
    """Text of ``o`` with object addresses and the library's name made comparable."""
    return re.sub("0x[0-9a-f]+", "ADDR", str(o)).replace("ptcore", "torch")


def norm_repr(o):
    """Reprs say ``ptcore.`` where torch's say ``torch.`` (accepted); None as text."""
    if isinstance(o, (list, tuple)):
        return type(o)(map(norm_repr, o))
    return o.replace("ptcore", "torch") if isinstance(o, str) else "None" if o is None else o


def randn_data(lib, seed, *shapes, dtype=np.float32):
    """Standard normal arrays of ``shapes`` from NumPy's seeded generator, as
    tensors of ``lib`` (torch or ptcore): the same data for both runs."""
    rng = np.random.RandomState(seed)
    return [lib.from_numpy(rng.randn(*s).astype(dtype)) for s in shapes]
