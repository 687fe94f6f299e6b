"""ptcore.utils: data loading and file-format helpers."""
