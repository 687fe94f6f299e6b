"""``ptcore._inductor``: the settings of torch's Inductor compiler that training scripts set
(``torch._inductor.config.coordinate_descent_tuning = True``).  ptcore has no graph compiler
(:func:`ptcore.compile` runs the model eagerly), so they change nothing; they exist with
torch's defaults so such scripts run unchanged."""
from ptcore._inductor import config  # noqa: F401

__all__ = ["config"]
