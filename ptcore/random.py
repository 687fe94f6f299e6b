"""``ptcore.random``: the default generator's seed and state (``torch.random``)."""
import contextlib
import warnings

from ptcore._ops.random import (  # noqa: F401
    default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)

__all__ = ["seed", "manual_seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Run a block whose random draws do not change the generators' state outside it.

    The CPU generator's state (and that of the given accelerator devices,
    when there are any) is saved on entry and restored on exit.

    Parameters
    ----------
    devices : iterable of int, optional
        Accelerator devices whose generators to fork (all, when None).
    enabled : bool, optional
        False makes this a no-op.
    device_type : str, optional
        The accelerator type (``"cuda"``).
    """
    import ptcore
    if device_type == "meta":
        yield
        return
    if not enabled:
        yield
        return
    if device_type not in ("cuda", None):
        raise RuntimeError(f"ptcore has no accelerator of type {device_type!r} to fork the RNG of")
    if devices is None:
        num = ptcore.cuda.device_count()
        devices = list(range(num))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    dev_states = [ptcore.cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, st in zip(devices, dev_states):
            ptcore.cuda.set_rng_state(st, d)
