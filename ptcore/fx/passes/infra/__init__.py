"""``ptcore.fx.passes.infra`` (``torch.fx.passes.infra``): the base class of
graph passes and the manager that schedules and runs them."""
from ptcore.fx.passes.infra import pass_base, pass_manager  # noqa: F401
