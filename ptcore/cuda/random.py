"""``ptcore.cuda.random`` (``torch.cuda.random``): the CUDA generators' seeding
and state functions under their module path (also ``ptcore.cuda.<name>``)."""
from ptcore.cuda._random import (  # noqa: F401
    get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed, seed_all,
    set_rng_state, set_rng_state_all,
)

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]
