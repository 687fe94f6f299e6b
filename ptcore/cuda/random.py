"""``ptcore.cuda``'s random-state functions.

Without a CUDA device they behave as PyTorch's do there: seeding is lazy
(recorded, applied when the device's generators are created, never an
error), the ``_all`` variants see zero devices, and the calls that read a
device generator need CUDA and raise."""
import builtins

from ptcore import _tensor as _C
from ptcore._ops.random import Generator
from ptcore.cuda.runtime import state as _runtime

__all__ = ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all"]

# seeding requested before CUDA is initialised, as (kind, value)
_queued = []


def _queue(kind, value):
    _queued[:] = [q for q in _queued if q[0] != kind]
    _queued.append((kind, value))
    _apply(kind, value)


def _check_seed(seed):
    import numbers
    if isinstance(seed, builtins.bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"manual_seed expected an int, but got {type(seed).__name__}")
    return builtins.int(seed)


def manual_seed(seed):
    """Seed the current device's generator (recorded until CUDA starts)."""
    _queue("manual_seed", _check_seed(seed))


def manual_seed_all(seed):
    """Seed every device's generator (recorded until CUDA starts)."""
    _queue("manual_seed_all", _check_seed(seed))


def seed():
    """Seed the current device's generator from OS entropy (lazily)."""
    _queue("seed", None)


def seed_all():
    """Seed every device's generator from OS entropy (lazily)."""
    _queue("seed_all", None)


def _lazy():
    _runtime.lazy_init("the CUDA random number generator")


def initial_seed():
    """The current device generator's seed; needs CUDA (initialises it)."""
    _lazy()
    return default_generator(_runtime.current_device()).initial_seed()


def get_rng_state(device="cuda"):
    """A device generator's state as a uint8 tensor (16 bytes: seed, offset); needs CUDA."""
    _lazy()
    return default_generator(_index(device)).get_state()


# the device generators (Philox, the CPU's Generator class: the same seed
# gives the CPU's stream), created on first use with the queued seeding
_generators = {}


def _index(device):
    if device is None or device == "cuda":
        return _runtime.current_device()
    if isinstance(device, builtins.int):
        return device
    d = _C._to_device(device)
    return _runtime.current_device() if d.index is None else d.index


def default_generator(idx):
    """Device ``idx``'s default generator (``torch.cuda.default_generators[idx]``)."""
    g = _generators.get(idx)
    if g is None:
        g = Generator(f"cuda:{idx}")
        cur = _runtime.current_device()
        for kind, value in _queued:
            if kind == "manual_seed_all" or (kind == "manual_seed" and idx == cur):
                g.manual_seed(value)
            elif kind == "seed_all" or (kind == "seed" and idx == cur):
                g.seed()
            elif isinstance(kind, tuple) and _index(kind[1]) == idx:
                g.set_state(value)
        _generators[idx] = g
    return g


def _reset_generators():
    _generators.clear()


def _apply(kind, value):
    """Apply a seeding to the generators that exist already."""
    if not _generators:
        return
    cur = _runtime.current_device()
    for idx, g in _generators.items():
        if kind == "manual_seed_all" or (kind == "manual_seed" and idx == cur):
            g.manual_seed(value)
        elif kind == "seed_all" or (kind == "seed" and idx == cur):
            g.seed()


def get_rng_state_all():
    """The states of every device's generator (an empty list without devices)."""
    return [get_rng_state(i) for i in range(_runtime.device_count())]


def set_rng_state(new_state, device="cuda"):
    """Set a device generator's state (recorded until CUDA starts)."""
    if not isinstance(new_state, _C._TensorBase):
        raise TypeError(f"set_rng_state expects a tensor, got {type(new_state).__name__}")
    # (an index stays an int: _index reads "cuda:1" or 1, not "1")
    key = device if isinstance(device, builtins.int) else str(device)
    _queue(("set_rng_state", key), new_state.clone())
    if _generators and _index(device) in _generators:
        _generators[_index(device)].set_state(new_state)


def set_rng_state_all(new_states):
    """Set every device generator's state from ``new_states``."""
    for i, state in zip(range(_runtime.device_count()), new_states):
        set_rng_state(state, i)
