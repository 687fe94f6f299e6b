"""ptcore.optim (see the issue tracker: work in progress)."""
