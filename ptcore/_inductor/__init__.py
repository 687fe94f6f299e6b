"""``ptcore._inductor``: the backend of :func:`ptcore.compile` (captured programs made into
generated segment functions with fused pointwise runs, training segments as one autograd node
each with a captured backward: ``backend``, ``codegen``, ``aot``, ``kernel_grads``), and the
settings of torch's Inductor compiler that training scripts set
(``torch._inductor.config.coordinate_descent_tuning = True``): those change nothing in
ptcore's backend; they exist with torch's defaults so such scripts run unchanged."""
from ptcore._inductor import config  # noqa: F401

__all__ = ["config"]
