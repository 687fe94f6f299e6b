"""ptcore.nn (see the issue tracker: work in progress)."""
