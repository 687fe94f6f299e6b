"""``ptcore.nn.init`` (work in progress)."""
