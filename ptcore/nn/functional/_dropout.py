"""Work in progress."""
__all__ = []
