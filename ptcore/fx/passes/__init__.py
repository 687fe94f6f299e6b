"""Passes over FX graphs (``ptcore.fx.passes.shape_prop``, ``split_module``,
and the pass infrastructure ``infra``)."""
from ptcore.fx.passes import shape_prop, split_module

__all__ = ["shape_prop", "split_module"]
