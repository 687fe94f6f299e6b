"""ptcore.multiprocessing (see the issue tracker: work in progress)."""
