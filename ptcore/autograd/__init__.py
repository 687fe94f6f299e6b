"""ptcore.autograd"""
