"""(in progress)"""
__all__ = []
_TENSOR_METHODS = {}
