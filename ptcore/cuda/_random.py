"""``ptcore.cuda``'s random-state functions.

Without a CUDA device they behave as PyTorch's do there: seeding is lazy
(recorded, applied when the device's generators are created, never an
error), the ``_all`` variants see zero devices, and the calls that read a
device generator need CUDA and raise."""
import builtins

__all__ = ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all"]

# seeding requested before CUDA is initialised, as (kind, value)
_queued = []


def _queue(kind, value):
    _queued[:] = [q for q in _queued if q[0] != kind]
    _queued.append((kind, value))


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
    from ptcore import cuda
    cuda._lazy_init("the CUDA random number generator")


def initial_seed():
    """The current device generator's seed; needs CUDA (initialises it)."""
    _lazy()


def get_rng_state(device="cuda"):
    """A device generator's state as a uint8 tensor; needs CUDA."""
    _lazy()


def get_rng_state_all():
    """The states of every device's generator (an empty list without devices)."""
    from ptcore import cuda
    return [get_rng_state(i) for i in range(cuda.device_count())]


def set_rng_state(new_state, device="cuda"):
    """Set a device generator's state (recorded until CUDA starts)."""
    from ptcore._tensor import _TensorBase
    if not isinstance(new_state, _TensorBase):
        raise TypeError(f"set_rng_state expects a tensor, got {type(new_state).__name__}")
    _queue(("set_rng_state", str(device)), new_state.clone())


def set_rng_state_all(new_states):
    """Set every device generator's state from ``new_states``."""
    from ptcore import cuda
    for i, state in zip(range(cuda.device_count()), new_states):
        set_rng_state(state, i)
