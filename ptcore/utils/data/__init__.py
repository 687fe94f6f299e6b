"""ptcore.utils.data (work in progress)."""
