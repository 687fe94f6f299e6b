"""ptcore.linalg (in progress)."""
