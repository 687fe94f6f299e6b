"""Passes over FX graphs (``ptcore.fx.passes.shape_prop``)."""
from ptcore.fx.passes import shape_prop

__all__ = ["shape_prop"]
